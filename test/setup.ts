/** Runs in workerd before each test file: a fresh D1 gets the real migrations. */
import { applyD1Migrations, env } from "cloudflare:test";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

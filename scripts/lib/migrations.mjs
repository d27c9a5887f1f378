/**
 * The remote D1 migrations, applied before any code that needs them is deployed: a migration is
 * additive, so the running code keeps working while it lands (docs/operations.md, "A schema migration").
 */
import { wranglerOk } from "./wrangler.mjs";

/** Applies the migrations not yet applied (wrangler's own bookkeeping decides which). `target`: --env and --config. */
export async function applyMigrations(target) {
  const out = await wranglerOk(["d1", "migrations", "apply", "DB", "--remote", ...target]);
  const applied = [...new Set([...out.matchAll(/│ (\S+\.sql)\s+│ ✅/g)].map((m) => m[1]))];
  console.log(applied.length ? `✓ applied D1 migrations ${applied.join(", ")}` : "✓ D1 migrations: none to apply");
}

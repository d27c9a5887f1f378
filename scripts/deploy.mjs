#!/usr/bin/env node
/**
 * `npm run deploy [-- --env production|staging] [--config wrangler.toml]`: deploys one environment of
 * wrangler.toml, refusing (exit 1, each setting named with its fix) a config that would take money
 * unsafely, and refusing the top-level development config outright. See scripts/lib/deploy.mjs.
 */
import { parseArgs } from "node:util";
import { deployEnvironment } from "./lib/deploy.mjs";

const { values } = parseArgs({
  options: {
    env: { type: "string", short: "e", default: "production" },
    config: { type: "string", short: "c", default: "wrangler.toml" },
  },
});

try {
  process.exitCode = (await deployEnvironment({ env: values.env, configPath: values.config })) ? 0 : 1;
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}

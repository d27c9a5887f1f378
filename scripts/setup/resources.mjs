/**
 * The environment's Cloudflare resources (its D1 database, R2 bucket, delivery queue and dead-letter
 * queue, and the D1 migrations applied so far), found with wrangler's read commands so setup creates
 * only what is missing and a second run creates nothing.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { wrangler, wranglerOk } from "../lib/wrangler.mjs";
import { queueNames } from "../lib/wrangler-toml.mjs";

/** What exists of the section's resources. All reads, run side by side. */
export async function findResources(section, target, configPath) {
  const db = section.d1_databases?.find((d) => d.binding === "DB");
  if (!db) throw new Error("The environment has no D1 binding DB.");
  const bucket = section.r2_buckets?.find((b) => b.binding === "BUCKET");
  if (!bucket) throw new Error("The environment has no R2 binding BUCKET.");
  const [databases, buckets, queues, applied] = await Promise.all([
    wranglerOk(["d1", "list", "--json"]).then((out) => JSON.parse(out)),
    wranglerOk(["r2", "bucket", "list"]).then(
      (out) => new Set([...out.matchAll(/^name:\s+(\S+)\s*$/gm)].map((m) => m[1])),
    ),
    Promise.all(queueNames(section).map(async (name) => ({ name, exists: await queueExists(name) }))),
    db.database_id ? appliedMigrations(target) : null,
  ]);
  const byId = databases.find((d) => d.uuid === db.database_id);
  const byName = databases.find((d) => d.name === db.database_name);
  const migrationsDir = path.resolve(path.dirname(configPath), db.migrations_dir ?? "migrations");
  const files = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql")).sort();
  return {
    database: { name: db.database_name, configuredId: db.database_id ?? "", id: (byId ?? byName)?.uuid ?? null },
    bucket: { name: bucket.bucket_name, exists: buckets.has(bucket.bucket_name) },
    queues,
    // Known only when the file already names an existing database: otherwise `migrations apply` finds out.
    pendingMigrations: byId && applied ? files.filter((f) => !applied.includes(f)) : byId || byName ? null : files,
  };
}

async function queueExists(name) {
  const result = await wrangler(["queues", "info", name]);
  if (result.code === 0) return true;
  if (/does not exist/.test(result.stderr + result.stdout)) return false;
  throw new Error(`wrangler queues info ${name} failed:\n${(result.stderr || result.stdout).trim()}`);
}

/**
 * The migrations recorded in the remote database's d1_migrations table (none when it has no such table yet); null when
 * it cannot be read.
 */
async function appliedMigrations(target) {
  const result = await wrangler([
    "d1",
    "execute",
    "DB",
    "--remote",
    "--json",
    "--command",
    "SELECT name FROM d1_migrations ORDER BY id",
    ...target,
  ]);
  if (result.code !== 0) return /no such table/.test(result.stdout + result.stderr) ? [] : null;
  return JSON.parse(result.stdout).flatMap((r) => r.results.map((row) => row.name));
}

/**
 * Creates the missing resources; returns the D1 database's id. (wrangler's own output, a snippet to
 * paste into the config, is not shown: setup writes the config itself.)
 */
export async function createResources(found) {
  let id = found.database.id;
  if (!id) {
    await wranglerOk(["d1", "create", found.database.name]);
    const databases = JSON.parse(await wranglerOk(["d1", "list", "--json"]));
    id = databases.find((d) => d.name === found.database.name)?.uuid;
    if (!id) throw new Error(`D1 database ${found.database.name} was created but is not listed.`);
    console.log(`✓ created D1 database ${found.database.name} (${id})`);
  }
  if (!found.bucket.exists) {
    await wranglerOk(["r2", "bucket", "create", found.bucket.name]);
    console.log(`✓ created R2 bucket ${found.bucket.name}`);
  }
  for (const queue of found.queues.filter((q) => !q.exists)) {
    await wranglerOk(["queues", "create", queue.name]);
    console.log(`✓ created queue ${queue.name}`);
  }
  return id;
}

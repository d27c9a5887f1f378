#!/usr/bin/env node
/**
 * `npm run doctor -- <url>`: the readiness report of a deployed service, for a person.
 * The operator token comes from `--token`, or ADMIN_TOKEN in the environment (a flag is visible
 * to other users of the machine in `ps`; prefer the environment). Exit status: 0 ready,
 * 1 not ready, 2 when the report could not be had at all.
 */
const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const base = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--token");
const token = flag("--token") ?? process.env.ADMIN_TOKEN;

if (!base) {
  console.error("usage: npm run doctor -- <service url> [--token <ADMIN_TOKEN>]   (or ADMIN_TOKEN in the environment)");
  process.exit(2);
}
const root = base.replace(/\/+$/, "");
const MARK = { ok: "ok  ", warn: "warn", fail: "FAIL" };

async function get(path, headers = {}) {
  const res = await fetch(`${root}${path}`, { headers, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: shown as text below.
  }
  return { status: res.status, body, text };
}

try {
  const live = await get("/health");
  console.log(`liveness  ${live.status === 200 ? "ok" : `FAIL (${live.status})`}  ${root}/health`);
  if (!token) {
    console.error("No operator token: set ADMIN_TOKEN (or --token) to read the readiness report.");
    process.exit(live.status === 200 ? 1 : 2);
  }
  const ready = await get("/v1/admin/health", { authorization: `Bearer ${token}` });
  if (ready.body?.checks) {
    console.log(`readiness ${ready.body.status} (${ready.body.duration_ms} ms, ${ready.body.checked_at})`);
    const width = Math.max(...ready.body.checks.map((c) => c.name.length));
    for (const c of ready.body.checks)
      console.log(
        `  ${MARK[c.status] ?? c.status} ${c.name.padEnd(width)}  ${c.detail}${c.version ? `  [${c.version}]` : ""}`,
      );
    process.exit(ready.body.status === "ready" ? 0 : 1);
  }
  // A problem instead of a report: the token, or the operator endpoints closed by a setting.
  console.error(`readiness: ${ready.status} ${ready.body?.detail ?? ready.text.slice(0, 300)}`);
  for (const s of ready.body?.settings ?? []) console.error(`  ${s.setting}: ${s.problem}. ${s.fix}`);
  process.exit(ready.status === 404 ? 2 : 1);
} catch (err) {
  console.error(`Could not reach ${root}: ${err.message}`);
  process.exit(2);
}

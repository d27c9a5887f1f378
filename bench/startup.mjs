#!/usr/bin/env node
/**
 * The Worker's start-up: what a cold isolate spends on the deployable bundle before it can answer its
 * first request (Cloudflare allows 1 s for the global scope), against a calibration Worker whose global
 * scope does a fixed amount of work (bench/startup-calibration/), measured in the same rounds: this
 * shared machine's speed varies by several times with its load, the ratio much less.
 *
 *   npm run bench:startup                       (5 rounds)
 *   BENCH_ROUNDS=7 BENCH_TOP=40 npm run bench:startup
 *   BENCH_PROFILE=0 BENCH_ROUNDS=3 npm run bench:startup      (CPU only, no profiles)
 *   BENCH_BASE=../other-checkout npm run bench:startup         (that checkout's bundle too, for a before/after)
 *
 * The service's bundle is built as `npm run deploy` builds it (`wrangler deploy --dry-run`, from the
 * worktree as it is), once. Each round then measures both targets, back to back:
 * - **CPU**, as `wrangler check startup` sets it up (the bundle's modules in a fresh workerd under
 *   miniflare, imported by the first request) but read as the runtime's own CPU time, from the kernel
 *   (each thread's `/proc/<workerd pid>/task/<tid>/schedstat`: nanoseconds on a CPU): *load*, from the
 *   process's start until it is ready (workerd's own start and the compilation of every module), and
 *   *first request*, the one that imports the bundle (its global scope evaluated; a request before it
 *   warms the path in). The round keeps the median of BENCH_STARTS (3) cold starts of each, interleaved.
 *   Sampled wall time stretches whenever the thread waits for a core, which here is often; CPU time does not.
 * - **The profile**: one `wrangler check startup --worker` of each, whose sampled time outside `(idle)` is
 *   printed too, and whose samples, summed over the rounds, say where the service's start-up goes (self
 *   time by source file and function, time by file including callees, and each module's initialisation).
 *   The profiles are kept under bench/results/.
 * - **Then**, in the service's cold starts only: the CPU of the first request that names a kind, and of the
 *   first request for the OpenAPI document, each after the import (FOLLOW_UPS): what was moved out of the
 *   global scope is paid there.
 * Printed: each target's medians, the medians of the rounds' ratios (with each round's), and the
 * bundle's size (raw and gzip, as wrangler reports its upload).
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { bundleSourceMap, log, otherActivity, run } from "./lib.mjs";

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const topN = Number(process.env.BENCH_TOP ?? 25);
/** Cold starts of each target per round, for the CPU measures (their median is the round's). */
const startsPerRound = Number(process.env.BENCH_STARTS ?? 3);
/** BENCH_PROFILE=0: the CPU measures only, without check startup's profiles (a quicker look). */
const profiling = process.env.BENCH_PROFILE !== "0";
const WRANGLER = path.resolve("node_modules/.bin/wrangler");
const env = { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", CI: "true" };
const work = await mkdtemp(path.join(tmpdir(), "zeitvault-startup-"));
const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
const results = path.resolve("bench/results");
await mkdir(results, { recursive: true });

/**
 * `wrangler deploy --dry-run` of a config: the upload form (what check startup reads), the bundle and wrangler's size
 * line.
 */
async function build(name, config) {
  const outdir = path.join(work, name);
  const form = path.join(work, `${name}.bundle`);
  const { stdout, stderr } = await run(
    WRANGLER,
    ["deploy", "--dry-run", "--config", config, "--outdir", outdir, "--outfile", form],
    { env, maxBuffer: 64 << 20 },
  );
  const upload = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(stdout + stderr);
  const mainModule = JSON.parse(
    /name="metadata"\r?\n\r?\n(.*)\r?\n/.exec(await readFile(form, "utf8"))?.[1] ?? "{}",
  ).main_module;
  const source = await readFile(path.join(outdir, mainModule ?? "worker.js"), "utf8");
  return { form, source, upload: upload ? { raw: Number(upload[1]), gzip: Number(upload[2]) } : null };
}

/** One `wrangler check startup` of a built form: its profile. */
async function profile(name, form, round) {
  const outfile = path.join(results, `startup-${stamp}-${name}-${round}.cpuprofile`);
  await run(WRANGLER, ["check", "startup", "--worker", form, "--outfile", outfile], { env, maxBuffer: 64 << 20 });
  return JSON.parse(await readFile(outfile, "utf8"));
}

const { Miniflare } = createRequire(path.resolve("node_modules/wrangler/package.json"))("miniflare");
/** Module types of the upload form's parts, as wrangler maps them. */
const MODULE_TYPES = {
  "application/javascript+module": "ESModule",
  "application/javascript": "CommonJS",
  "text/plain": "Text",
  "application/octet-stream": "Data",
  "application/wasm": "CompiledWasm",
};

/** The upload form wrangler wrote (`--outfile`), parsed. */
async function readForm(file) {
  const bytes = await readFile(file);
  const boundary = bytes.subarray(2, bytes.indexOf(10)).toString().trim();
  return new Response(bytes, { headers: { "content-type": `multipart/form-data; boundary=${boundary}` } }).formData();
}

/** Nanoseconds a process's live threads have spent on a CPU. */
async function cpuNs(pid) {
  let sum = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    sum += await readFile(`/proc/${pid}/task/${tid}/schedstat`, "utf8").then(
      (line) => Number(line.split(" ")[0]),
      () => 0,
    );
  }
  return sum;
}

const workerdChildren = () =>
  execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)])
    .toString()
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, comm]) => comm === "workerd")
    .map(([pid]) => Number(pid));

/**
 * The requests measured after the import, each on its own (service and base only): what the first request
 * that names a kind pays for it (its module and routes built; refused, no credential, before any storage),
 * and what the first request for the document pays (every kind loaded, the document built).
 */
const FOLLOW_UPS = {
  kind: { method: "GET", path: "/v1/counters/r_4k2R8h1Zq0Wm3n5T7v9x1y" },
  document: { method: "GET", path: "/openapi.json" },
};

/** What the follow-up requests need of the form's bindings: its variables, a D1 database and its rate limiters. */
function bindingsOf(metadata) {
  const options = { bindings: {}, d1Databases: [], ratelimits: {} };
  for (const b of metadata.bindings ?? []) {
    if (b.type === "plain_text") options.bindings[b.name] = b.text;
    else if (b.type === "d1") options.d1Databases.push(b.name);
    else if (b.type === "ratelimit") options.ratelimits[b.name] = { simple: b.simple };
  }
  return options;
}

/**
 * CPU of one cold start of a built form, in ms: `load` (workerd started and the modules compiled) and
 * `first` (the request that imports the main module), as check startup's harness runs it; with
 * `followUps`, each follow-up request's too, one after another.
 */
async function cpuOfStart(formFile, followUps = false) {
  const form = await readForm(formFile);
  const metadata = JSON.parse(form.get("metadata"));
  const modules = [];
  for (const [name, part] of form.entries()) {
    if (typeof part !== "string" && MODULE_TYPES[part.type])
      modules.push({ type: MODULE_TYPES[part.type], path: name, contents: new Uint8Array(await part.arrayBuffer()) });
  }
  const main = JSON.stringify(metadata.main_module);
  const entry = `export default { async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/start") await import(${main});
    if (url.pathname === "/then") {
      const worker = (await import(${main})).default;
      const then = new Request("https://startup.example" + url.searchParams.get("path"), {
        method: url.searchParams.get("method"),
      });
      const answer = await worker.fetch(then, env, ctx);
      return new Response(String(answer.status));
    }
    return new Response("ok");
  } };`;
  const before = new Set(workerdChildren());
  const mf = new Miniflare({
    name: "startup",
    compatibilityDate: metadata.compatibility_date,
    compatibilityFlags: metadata.compatibility_flags,
    modulesRoot: "/",
    modules: [{ type: "ESModule", path: "startup-entry.mjs", contents: entry }, ...modules],
    ...bindingsOf(metadata),
  });
  try {
    await mf.ready;
    const pid = workerdChildren().find((p) => !before.has(p));
    const load = await cpuNs(pid);
    for (let i = 0; i < 2; i++) await (await mf.dispatchFetch("http://startup/warm")).text();
    await new Promise((r) => setTimeout(r, 100));
    const warm = await cpuNs(pid);
    await (await mf.dispatchFetch("http://startup/start")).text();
    const first = await cpuNs(pid);
    const measured = { load: load / 1e6, first: (first - warm) / 1e6 };
    if (!followUps) return measured;
    for (const [name, { method, path }] of Object.entries(FOLLOW_UPS)) {
      await new Promise((r) => setTimeout(r, 100));
      const at = await cpuNs(pid);
      const status = await (
        await mf.dispatchFetch(`http://startup/then?${new URLSearchParams({ method, path })}`)
      ).text();
      measured[name] = ((await cpuNs(pid)) - at) / 1e6;
      measured[`${name}Status`] = Number(status);
    }
    return measured;
  } finally {
    await mf.dispose();
  }
}

/** Each sample's duration (until the next one, as DevTools counts it) with its node. */
function samples(p) {
  const out = [];
  for (let i = 0; i < p.samples.length; i++)
    out.push([p.samples[i], i + 1 < p.timeDeltas.length ? p.timeDeltas[i + 1] : 0]);
  return out;
}

/**
 * The samples again, each counted as one sampling interval (the profile's median gap): a sample taken after
 * the thread waited for a core carries that wait in its gap, which says nothing about what it was doing.
 */
function ticks(p) {
  const gaps = p.timeDeltas.slice(1).sort((a, b) => a - b);
  const interval = gaps[Math.floor(gaps.length / 2)] ?? 0;
  return p.samples.map((id) => [id, interval]);
}

/** A profile's time outside `(idle)`, in ms: as sampled (`samples`, wall time), or counted (`ticks`). */
function busyMs(p, weigh = samples) {
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  return (
    weigh(p).reduce((sum, [id, us]) => sum + (nodes.get(id).callFrame.functionName === "(idle)" ? 0 : us), 0) / 1000
  );
}

/**
 * Self time by source file and by function, and inclusive time by source file, over several profiles of one bundle,
 * counted in samples (`ticks`). A frame's self time is spread over the lines its samples were taken at
 * (`positionTicks`): the bundle's top level holds every module's top-level statements, and those lines say whose they
 * are.
 */
function where(profiles, map) {
  const byFile = new Map(),
    byFunction = new Map(),
    inclusive = new Map(),
    initialising = new Map();
  let total = 0;
  const add = (m, k, us) => m.set(k, (m.get(k) ?? 0) + us);
  const fromBundle = (cf) => cf.url.endsWith("/worker.js") || cf.url === "worker.js";
  const place = (cf) =>
    fromBundle(cf) ? map.fileOf(cf.lineNumber) : cf.url ? "(wrapper)" : cf.functionName || "(native)";
  for (const p of profiles) {
    const nodes = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map();
    for (const n of p.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
    const spreads = new Map();
    /** [file, function name, share] of a node's self time. */
    const spread = (node) => {
      const { callFrame: cf } = node;
      const caller = !cf.url && parent.has(node.id) ? nodes.get(parent.get(node.id)).callFrame : null;
      if (!fromBundle(cf) || !node.positionTicks?.length) {
        // A native frame (a RegExp, a builtin) is named with the file that called it.
        const name = fromBundle(cf)
          ? `${cf.functionName || "(anonymous)"} ${place(cf)}:${cf.lineNumber + 1}`
          : cf.functionName || "(native)";
        return [[place(cf), caller?.url ? `${name} ← ${place(caller)}` : name, 1]];
      }
      // Samples taken outside the function's own code (a builtin, compiling what it calls) have no line.
      const ticks = Math.max(
        node.hitCount,
        node.positionTicks.reduce((sum, t) => sum + t.ticks, 0),
      );
      const unplaced = 1 - node.positionTicks.reduce((sum, t) => sum + t.ticks, 0) / ticks;
      const label =
        cf.lineNumber < 0 ? "(top level)" : `${cf.functionName || "(anonymous)"} ${place(cf)}:${cf.lineNumber + 1}`;
      const shares = new Map(unplaced > 0 ? [[`${place(cf)}\0${label} (no line)`, unplaced]] : []);
      for (const t of node.positionTicks) {
        const file = map.fileOf(t.line - 1);
        const name =
          cf.lineNumber < 0
            ? `(top level) ${file}`
            : `${cf.functionName || "(anonymous)"} ${place(cf)}:${cf.lineNumber + 1}` +
              `${cf.functionName ? "" : ` ${map.lineOf(cf.lineNumber)}`}`;
        const key = `${file}\0${name}`;
        shares.set(key, (shares.get(key) ?? 0) + t.ticks / ticks);
      }
      return [...shares].map(([key, share]) => [...key.split("\0"), share]);
    };
    for (const [id, us] of ticks(p)) {
      const node = nodes.get(id);
      if (node.callFrame.functionName === "(idle)") continue;
      total += us;
      if (!spreads.has(id)) spreads.set(id, spread(node));
      for (const [file, name, share] of spreads.get(id)) {
        add(byFile, file, us * share);
        add(byFunction, name, us * share);
      }
      const seen = new Set();
      for (let at = id; at !== undefined; at = parent.get(at))
        if (nodes.get(at).callFrame.functionName !== "(root)") seen.add(place(nodes.get(at).callFrame));
      for (const file of seen) add(inclusive, file, us);
      add(initialising, initialiser(nodes, parent, id), us);
    }
  }
  const top = (m, n) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(
        ([k, us]) =>
          `| ${((us / total) * 100).toFixed(1)}% | ${(us / 1000 / profiles.length).toFixed(1)} ms | \`${k}\` |`,
      );
  return {
    files: top(byFile, topN),
    inclusive: top(inclusive, topN),
    functions: top(byFunction, topN),
    modules: top(initialising, topN),
  };

  /**
   * Whose initialisation a sample belongs to: esbuild wraps a module that is imported lazily somewhere (and
   * every module it imports) in a function named by its path, run once; the nearest such frame above the
   * sample owns it. `__init` is the wrapper itself (its own time is mostly compiling the module it is about
   * to run); nothing above: the bundle's top level, or a request's own work.
   */
  function initialiser(nodes, parent, id) {
    const { functionName } = nodes.get(id).callFrame;
    if (functionName === "__init") return "(compiling a module's code before its first run)";
    if (functionName === "(garbage collector)" || functionName === "(program)") return functionName;
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const cf = nodes.get(at).callFrame;
      if (/\/[^/]+\.(?:[cm]?[jt]s|json)$/.test(cf.functionName) && fromBundle(cf)) {
        const file = cf.functionName.replace(/^.*node_modules\//, "");
        return file.startsWith("src/") || file.startsWith("durable-objects/")
          ? file
          : `${place(cf)} (${file.split("/").slice(-2).join("/")})`;
      }
    }
    return "(not in a wrapped module: the top level, or the request)";
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

log(`building the service (wrangler deploy --dry-run) and the calibration worker in ${work}`);
const service = await build("service", "wrangler.toml");
const calibration = await build("calibration", "bench/startup-calibration/wrangler.toml");
// BENCH_BASE=<a checkout, node_modules beside it>: its bundle too, in the same rounds, to compare a change with what it
// changes.
const base = process.env.BENCH_BASE
  ? await build("base", path.join(path.resolve(process.env.BENCH_BASE), "wrangler.toml"))
  : null;
const gzipBytes = gzipSync(service.source).length;
log(`machine before: ${(await otherActivity()).text}`);

const serviceProfiles = [];
const measured = { service: [], calibration: [], base: [] };
for (let round = 1; round <= rounds; round++) {
  // Rotate which goes first, so none always meets the machine right after another.
  const names = base ? ["service", "calibration", "base"] : ["service", "calibration"];
  const order = names.map((_, i) => names[(i + round - 1) % names.length]);
  const forms = { service: service.form, calibration: calibration.form, base: base?.form };
  // Several cold starts of each, interleaved; the round keeps each one's median.
  const starts = { service: [], calibration: [], base: [] };
  for (let i = 0; i < startsPerRound; i++)
    for (const name of order) starts[name].push(await cpuOfStart(forms[name], name !== "calibration"));
  for (const name of order) {
    const p = profiling && name !== "base" ? await profile(name, forms[name], round) : null;
    const cpu = Object.fromEntries(
      Object.keys(starts[name][0]).map((key) => [key, median(starts[name].map((s) => s[key]))]),
    );
    measured[name].push({ ...cpu, sampled: p ? busyMs(p) : NaN, counted: p ? busyMs(p, ticks) : NaN });
    if (p && name === "service") serviceProfiles.push(p);
  }
  const [s, c] = [measured.service.at(-1), measured.calibration.at(-1)];
  log(
    `round ${round}: first request ${s.first.toFixed(0)} / ${c.first.toFixed(0)} ms, load ` +
      `${s.load.toFixed(0)} / ${c.load.toFixed(0)} ms, check startup ${s.sampled.toFixed(0)} / ` +
      `${c.sampled.toFixed(0)} ms (service / calibration)`,
  );
}
log(`machine after: ${(await otherActivity()).text}`);

const { files, inclusive, functions, modules } = where(serviceProfiles, bundleSourceMap(service.source));
const kib = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`;
const row = (label, key, of = "service", against = "calibration", againstKey = key) => {
  const [svc, cal] = [measured[of].map((m) => m[key]), measured[against].map((m) => m[againstKey])];
  const ratios = svc.map((ms, i) => ms / cal[i]).sort((a, b) => a - b);
  return (
    `| ${label} | ${median(svc).toFixed(0)} ms | ${median(cal).toFixed(0)} ms | **` +
    `${median(ratios).toFixed(2)}×** | ${ratios.map((x) => x.toFixed(2)).join(", ")} |`
  );
};
const upload = service.upload
  ? `${service.upload.raw.toFixed(0)} KiB / gzip ${service.upload.gzip.toFixed(0)} KiB`
  : "(not reported)";
const followUps = [...new Set(measured.service.map((m) => `${m.kindStatus}/${m.documentStatus}`))].join(", ");
const firsts = measured.service
  .map((m, i) => `${m.first.toFixed(0)}/${measured.calibration[i].first.toFixed(0)}`)
  .join(", ");
const followUpLine =
  `- follow-up answers (service): ${followUps} (a kind's request / the document); ` +
  "the calibration's global scope is the unit of their ratios";
const profilesHeading =
  `Where the service's start-up goes in check startup's profiles (${rounds}; ` +
  "ms per start-up, as samples × the sampling interval):";
const KIND_ROW = "then: a kind's first request (GET /v1/counters/{id}, 401)";
// Without profiles (BENCH_PROFILE=0) there is nothing to put in check startup's rows.
const profileRows = profiling
  ? `${row("check startup: sampled time", "sampled")}\n${row("check startup: samples × interval", "counted")}\n`
  : "";
console.log(`
## Start-up, ${new Date().toISOString().slice(0, 10)}, ${rounds} rounds

| measure | service (median) | calibration (median) | service / calibration (median of rounds) | rounds |
|---|---|---|---|---|
${row("CPU, first request (global scope)", "first")}
${row("CPU, load (workerd start, compilation)", "load")}
${profileRows}${row(KIND_ROW, "kind", "service", "calibration", "first")}
${row("then: the first document (GET /openapi.json)", "document", "service", "calibration", "first")}
${
  base
    ? `${row("base: CPU, first request", "first", "base")}
${row("base: CPU, load", "load", "base")}
${row("service / base: CPU, first request", "first", "service", "base")}
${row("service / base: CPU, load", "load", "service", "base")}
${row("service / base: a kind's first request", "kind", "service", "base")}
${row("service / base: the first document", "document", "service", "base")}
`
    : ""
}
- bundle: worker.js ${kib(Buffer.byteLength(service.source))} (gzip ${kib(gzipBytes)}); wrangler's upload ${upload}
${followUpLine}
- per round (service / calibration, ms): ${firsts} (first request)
${
  profiling
    ? `
${profilesHeading}

| self | ms | source file |
|---|---|---|
${files.join("\n")}

| total | ms | source file (self and callees) |
|---|---|---|
${inclusive.join("\n")}

| self | ms | function |
|---|---|---|
${functions.join("\n")}

| share | ms | initialisation of a module (its top-level code and what it calls; other modules' excluded) |
|---|---|---|
${modules.join("\n")}
`
    : ""
}`);
await writeFile(
  path.join(results, `startup-${stamp}.json`),
  JSON.stringify({ measured, upload: service.upload, bytes: Buffer.byteLength(service.source), gzipBytes }, null, 2),
);

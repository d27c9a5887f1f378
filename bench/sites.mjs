#!/usr/bin/env node
/**
 * Static site serving: a 10 KiB asset of a deployed site at its public address (the public router,
 * the site's Durable Object resolving the path in its file table, the R2 read) with and without a
 * matching If-None-Match (304, answered from the file table alone), against a bare Worker reading the
 * same bytes from R2 (bench/bare: `GET /r2/{key}`), under `wrangler dev` on this machine, measured with
 * autocannon in the same run, targets alternated round by round; then PDF render time for a 10-page
 * HTML document through the pdf kind and the local engine (Debian's chromium), p50 and p99.
 *
 *   npm run bench:sites                  (20 connections, 3 rounds of 8 s per target; 20 renders)
 *   BENCH_ROUNDS=5 BENCH_RENDERS=40 npm run bench:sites
 */
import autocannon from "autocannon";
import { strToU8, zipSync } from "fflate";
import { startEngines } from "../scripts/engines.mjs";
import { startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, percentiles, roundRatios } from "./lib.mjs";

const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const duration = Number(process.env.BENCH_SECONDS ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const renders = Number(process.env.BENCH_RENDERS ?? 20);

const asset = strToU8(`/* 10 KiB of CSS */\n${"body { color: #123456; }\n".repeat(420)}`.slice(0, 10 * 1024));

async function load(title, url, headers = {}) {
  const result = await autocannon({ title, url, headers, connections, duration });
  return {
    title,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result["2xx"] + result["3xx"],
    other: result.non2xx - result["3xx"] + result.errors + result.timeouts,
  };
}

const engines = await startEngines();
const service = await startWranglerDev({ rateLimitPerMinute: 1_000_000, vars: { ENGINE_URL: engines.url } });
const bare = await startWranglerDev({ config: "bench/bare/wrangler.toml" });
try {
  const token = await buyCredits(service.url, 10);
  const auth = { "content-type": "application/json", authorization: `Bearer ${token}` };
  const site = await (
    await fetch(`${service.url}/v1/sites`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ ttl_seconds: 86400 }),
    })
  ).json();
  const deployed = await fetch(`${service.url}/v1/sites/${site.id}/deploy`, {
    method: "PUT",
    body: zipSync({ "index.html": strToU8("<h1>bench</h1>"), "assets/app.css": asset }),
    headers: {
      authorization: `Bearer ${site.management_token}`,
      "x-credit-token": token,
      "content-type": "application/zip",
    },
  });
  if (!deployed.ok) throw new Error(`deploy: ${deployed.status} ${await deployed.text()}`);
  const assetUrl = `${site.urls.public}/assets/app.css`;
  const etag = (await fetch(assetUrl)).headers.get("etag");
  await fetch(`${bare.url}/r2/app.css`, { method: "PUT", body: asset, headers: { "content-type": "text/css" } });

  const targets = [
    ["bare Worker, R2 read (10 KiB)", `${bare.url}/r2/app.css`, {}],
    ["site asset (10 KiB)", assetUrl, {}],
    ["site asset, If-None-Match (304)", assetUrl, { "if-none-match": etag }],
  ];
  for (const [, url, headers] of targets) await autocannon({ url, headers, connections, duration: 3 });
  const runs = targets.map(() => []);
  for (let round = 0; round < rounds; round++)
    for (const [i, [title, url, headers]] of targets.entries()) runs[i].push(await load(title, url, headers));
  const median = (rs) => [...rs].sort((a, b) => a.rps - b.rps)[Math.floor(rs.length / 2)];
  const results = runs.map(median);
  console.log("| target | req/s | p50 ms | p99 ms | non-2xx/3xx |\n|---|---|---|---|---|");
  for (const r of results) console.log(`| ${r.title} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.other} |`);
  console.log(
    `\nsite asset / bare, median of the rounds' ratios: ${roundRatios(runs[1], runs[0]).text}` +
      `; with If-None-Match: ${roundRatios(runs[2], runs[0]).text} (target ≥ 90%)`,
  );

  const pdf = await (await fetch(`${service.url}/v1/pdf`, { method: "POST", headers: auth, body: "{}" })).json();
  const html = Array.from(
    { length: 10 },
    (_, i) =>
      `<section style="page-break-after: always"><h1>Chapter ${i + 1}</h1>` +
      `${"<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>".repeat(12)}</section>`,
  ).join("");
  const times = [];
  for (let i = 0; i < renders; i++) {
    const started = performance.now();
    const res = await fetch(`${service.url}/v1/pdf/${pdf.id}/renders`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${pdf.management_token}`,
        "x-credit-token": token,
      },
      body: JSON.stringify({ html }),
    });
    const done = await res.json();
    if (!res.ok || done.pages !== 10)
      throw new Error(`render ${i}: ${res.status} ${JSON.stringify(done).slice(0, 200)}`);
    times.push(performance.now() - started);
  }
  const p = percentiles(times);
  console.log(
    `\nPDF render, 10-page HTML, local chromium (${renders} renders, one at a time): p50 ` +
      `${Math.round(p.p50)} ms, p99 ${Math.round(p.p99)} ms`,
  );
} finally {
  await Promise.all([service.stop(), bare.stop(), engines.stop()]);
}

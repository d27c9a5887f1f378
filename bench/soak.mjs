#!/usr/bin/env node
/**
 * A soak: the service as `npm run dev` runs it (wrangler dev on the project's workerd, the local engines,
 * the egress proxy), driven by several agents at once with a mix of every kind's operations, while the
 * runtime is killed (SIGKILL) at random moments and started again on the same state, and receivers fail,
 * stall and close. At the end it waits for quiescence and reconciles what the service answered with what
 * it holds. It prints a table per kind and per invariant; exit code 1 when an invariant fails.
 *
 *   npm run bench:soak                                      (30 minutes, a kill every 2–5 minutes)
 *   SOAK_PROFILE=short npm run bench:soak                   (about 5 minutes, a kill every 60–100 s)
 *   SOAK_MINUTES=10 SOAK_AGENTS=4 SOAK_KILL_SECONDS=120-300 SOAK_SOURCE=head npm run bench:soak
 *   SOAK_SAMPLES=/tmp/soak-memory.json npm run bench:soak   (also writes the memory samples there)
 *   SOAK_FAULTS=1 npm run bench:soak                        (the fault hooks too, through the front: see below)
 *
 * The traffic, per agent (each with its own credit token):
 * - every kind created from its published example (`/openapi.json`; the few whose example names another
 *   resource are skipped), read, extended, cancelled or left to expire (TTLs of 1–3 minutes);
 * - counters incremented, journals appended to, queues pushed, leased and acked (the counts the end checks);
 * - wakeups due during the run, delivered to this process's receiver, which answers 500, stalls past the
 *   attempt's timeout or closes the connection on a first attempt at random, and 200 afterwards;
 * - public-address traffic: captures into bins, clicks on links;
 * - creates paid by x402 (a payment signed per call, settlement `none` as in `npm run dev`), and a quarter of the
 *   other calls paid with an OAuth access token (client credentials) in place of the credit token;
 * - transfers copying between keys of an S3-compatible peer, notify sends by mailto:// to an SMTP peer, and watches
 *   of a target whose health flips at random (bench/soak-peers.mjs);
 * - with SOAK_FAULTS=1, faults through the resources' own hooks (durable-objects/resource/test-faults.ts, reached
 *   through the front worker bench/soak-faults/; off by default, see withFaults): a process that dies after an
 *   extend's charge or once an end is marked, R2 refusing an end's deletes, a firing's send skipped, refused or lost.
 * Every POST carries an Idempotency-Key and is sent again with it until it gets a definitive answer, as a
 * client that lost its connection should: so every charge can be matched to an answered 2xx.
 *
 * The reconciliation (see bench/README.md for what each line means and a run's table):
 * - money: per resource and operation, the receipts' charges equal the 2xx answers; each token's balance
 *   equals what it bought minus its charges; the balance read settles every hold;
 * - deliveries: every wakeup that fired reached the receiver with a 200 at least once; repeats of a
 *   webhook-id (allowed: at least once) are counted;
 * - resource state: no wakeup left scheduled or firing past its time; every ended resource answers 410;
 *   R2 holds no object once every resource has ended; every transfer completed with a copy equal to its source;
 *   every notify send arrived by SMTP; every watch's checks are answers its target gave, its state follows them,
 *   and it still checks;
 * - stored data: every journal's hash chain verifies and holds the acknowledged appends; every counter
 *   equals its acknowledged increments; every queue holds what was pushed and not acked;
 * - answers: no 5xx outside the kill windows (a kill window runs from the kill to 10 s after the restart) but
 *   the injected deaths';
 * - memory: the isolate's JS heap after a full collection, last quarter against the first (asserted only in the
 *   long profile); workerd's resident memory reported beside the Durable Objects it holds open.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, statSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startEgressProxy } from "../scripts/egress-proxy.mjs";
import { startEngines } from "../scripts/engines.mjs";
import { descendants, openFiles, startWranglerDev } from "../scripts/wrangler-dev.mjs";
import { buyCredits, inspector, log, run, sleep, snapshotSource } from "./lib.mjs";
import { startFlappingTarget, startS3Peer, startSmtpPeer } from "./soak-peers.mjs";

const PROFILES = {
  long: { minutes: 30, agents: 4, kill: [120, 300] },
  short: { minutes: 5, agents: 3, kill: [60, 100] },
};

/** A number between a and b. */
const between = (a, b) => a + Math.random() * (b - a);
const pick = (list) => list[Math.floor(Math.random() * list.length)];
/** The share of calls paid with an OAuth access token in place of the credit token it stands for. */
const OAUTH_SHARE = 0.25;
/** The share of extends and cancels that meet a fault hook first. */
const FAULT_SHARE = 0.1;
/** The worker wrangler serves in front of the service: it forwards, and injects faults (its worker.mjs says how). */
const FRONT = "bench/soak-faults/wrangler.toml";

/**
 * Runs the soak and answers its result: `{ rows, failures, text }`. Options default from the environment
 * (SOAK_PROFILE, SOAK_MINUTES, SOAK_AGENTS, SOAK_KILL_SECONDS=min-max, SOAK_SOURCE).
 */
export async function soak(options = {}) {
  const env = process.env;
  const profile = PROFILES[options.profile ?? env.SOAK_PROFILE ?? "long"];
  const minutes = Number(options.minutes ?? env.SOAK_MINUTES ?? profile.minutes);
  const agents = Number(options.agents ?? env.SOAK_AGENTS ?? profile.agents);
  const [killMin, killMax] = options.kill ?? env.SOAK_KILL_SECONDS?.split("-").map(Number) ?? profile.kill;
  const assertMemory = (options.profile ?? env.SOAK_PROFILE ?? "long") === "long";
  // Off unless asked: behind the front the service runs as wrangler's second worker, which wrangler gives no rate
  // limit bindings; every request then logs an error that wrangler source-maps by re-reading the bundle, and on a
  // loaded machine it falls behind until workerd blocks writing its log (bench/README.md, the 2026-11-28 run).
  const withFaults = (options.faults ?? env.SOAK_FAULTS) === "1" || options.faults === true;
  const durationMs = minutes * 60_000;

  // ---- the receiver: webhook targets that fail on a first attempt at random, and page targets ----
  const deliveries = new Map(); // webhook-id → { attempts, ok }
  const byPath = new Map(); // /w/<key> → webhook-id of its first 200
  const receiver = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"] ?? "");
      const url = req.url ?? "/";
      if (!id) return res.writeHead(200, { "content-type": "text/html" }).end("<html><body>soak target</body></html>");
      const d = deliveries.get(id) ?? { attempts: 0, ok: 0, path: url };
      deliveries.set(id, d);
      d.attempts++;
      // Decided by the id: the same delivery meets the same fault on its first attempt, whatever the order.
      const roll = createHash("sha256").update(id).digest()[0] / 256;
      if (d.attempts === 1 && roll < 0.15) return res.writeHead(500).end("failing");
      if (d.attempts === 1 && roll < 0.22) return req.socket.destroy();
      // past the attempt's 15 s
      if (d.attempts === 1 && roll < 0.27) return setTimeout(() => req.socket.destroy(), 17_000);
      d.ok++;
      if (!byPath.has(url)) byPath.set(url, id);
      res.writeHead(200).end("ok");
    });
  });
  await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
  const receiverUrl = `http://127.0.0.1:${receiver.address().port}`;

  // ---- the service, as npm run dev starts it ----
  const sourceDir = await snapshotSource(options.source ?? env.SOAK_SOURCE ?? "worktree");
  const home = process.cwd();
  process.chdir(sourceDir);
  const [engines, proxy, s3, smtp, target] = await Promise.all([
    startEngines({ port: 0 }),
    startEgressProxy(),
    startS3Peer(),
    startSmtpPeer(),
    startFlappingTarget(),
  ]);
  const vars = {
    ENVIRONMENT: "development",
    X402_SETTLEMENT: "none",
    ALLOW_PRIVATE_TARGETS: "true",
    // Retries within the run: 5 s, 5 min, 30 min … become 0.05 s, 3 s, 18 s …
    DELIVERY_RETRY_SCALE: "0.01",
    ENGINE_URL: engines.url,
    ...(proxy.missing ? {} : { EGRESS_PROXY_URL: proxy.url, EGRESS_IPS: proxy.ips }),
  };
  // The error lines over the whole run: a request's carry its id ([req_…]); an error that escaped is "Uncaught";
  // workerd's own name its source (docs/operations.md); the rest are the service's work outside a request (an alarm,
  // the queue consumer), naming the resource or transfer they were for.
  const errorLines = { ours: [], escaped: [], runtime: [], background: [] };
  const onOutput = (chunk) => {
    // wrangler colours its [ERROR] tag even with NO_COLOR (its escapes sit inside the brackets): read the plain text.
    for (const line of chunk.replace(/\x1b\[[0-9;]*m/g, "").split("\n")) {
      if (/\[req_[0-9A-Za-z]+\]/.test(line)) errorLines.ours.push(line.slice(0, 300));
      else if (/Uncaught/.test(line)) errorLines.escaped.push(line.slice(0, 200));
      else if (/\[ERROR\] (e = |.*workerd@)/.test(line)) errorLines.runtime.push(line.slice(0, 200));
      else if (/\[ERROR\]/.test(line)) errorLines.background.push(line.slice(0, 200));
    }
  };
  // The front (bench/soak-faults/) forwards to the service and reaches the resources' fault hooks.
  const dev = {
    rateLimitPerMinute: 1_000_000,
    // The local queue broker (miniflare's) hands the consumer one batch at a time, where Cloudflare runs consumers
    // concurrently; a batch lasts as long as its slowest attempt, and the receiver stalls one first attempt in twenty
    // past the attempt's 15 s. At 10 a batch that carried about 90 deliveries a minute against the 2026-11-28 10:15
    // run's 240 (bench/README.md); at Cloudflare's largest batch, 100, one batch at a time carries about 400.
    queueBatchSize: 100,
    vars,
    onOutput,
    ...(withFaults ? { frontConfig: FRONT } : {}),
  };
  let service = await startWranglerDev(dev);
  const { state, url } = service;
  const port = Number(new URL(url).port);

  // ---- kills ----
  const kills = []; // { at, up } (up: when it answered again, + 10 s)
  let up = Promise.resolve();
  const inKillWindow = (t) => kills.some((k) => t >= k.at - 1000 && (k.up === null || t <= k.up));
  async function killAndRestart() {
    const k = { at: Date.now(), up: null };
    kills.push(k);
    let restarted;
    up = new Promise((r) => (restarted = r));
    await service.kill();
    log(`killed the runtime (kill ${kills.length})`);
    service = await startWranglerDev({ ...dev, state, port });
    k.up = Date.now() + 10_000;
    log(`restarted in ${((Date.now() - k.at) / 1000).toFixed(1)} s`);
    restarted();
  }

  // ---- memory, every 10 s: the workerd processes' resident size, and how many Durable Objects they hold open (each
  // keeps its SQLite file open: the distinct .sqlite files under the state's v3/do/ among their descriptors); every
  // 60 s the isolate's JS heap after a full collection, through the inspector (bench/lib.mjs), which is the memory
  // the service's own code holds. bench/README.md reads the three together. ----
  const memory = []; // { t, rss, objects }
  const heaps = []; // { t, heap } (MiB, after GC)
  let cdp = null;
  const memoryTimer = setInterval(async () => {
    const pids = (await descendants(service.pid))
      .filter((p) => /(^|\/)workerd$/.test(p.args[0] ?? ""))
      .map((p) => p.pid);
    let rss = 0;
    const open = new Set();
    for (const pid of pids) {
      rss += await rssOf(pid);
      for (const f of await openFiles(pid))
        if (f.startsWith(path.join(state, "v3", "do")) && f.endsWith(".sqlite")) open.add(f);
    }
    if (rss) memory.push({ t: Date.now(), rss: rss / 1024, objects: open.size });
  }, 10_000);
  // The runtime's own inspector (wrangler's inspector proxy is off: scripts/wrangler-dev.mjs says why), found again
  // each time (a restart moves it), connected only while it samples.
  const heapTimer = setInterval(async () => {
    try {
      cdp = await inspector(await service.inspectorUrl());
      await cdp.send("HeapProfiler.collectGarbage");
      const usage = await cdp.send("Runtime.getHeapUsage");
      heaps.push({ t: Date.now(), heap: usage.usedSize / 2 ** 20 });
    } catch {
      // killed, or restarting: the next minute tries again
    } finally {
      cdp?.close();
      cdp = null;
    }
  }, 60_000);

  // ---- the client: every answer recorded; a POST sent again with its key until it is definitive ----
  const answers = []; // { t, status, kind, op, requestId, inKill }
  const fiveHundreds = [];
  const unresolved = []; // calls given up on (no definitive answer)
  let oauthPaid = 0; // 2xx answers to calls paid with an access token
  const injectedDeaths = []; // 500s the fault hooks asked for (test-faults.ts's dieAt): answered, not retried
  /**
   * An OAuth access token for the agent's credit token (client credentials). The development service signs with a key
   * of its isolate, so one issued before a restart no longer verifies: a 401 takes a new one.
   */
  async function accessToken(agent) {
    while (!agent.access) {
      const form = new URLSearchParams({ grant_type: "client_credentials", client_secret: agent.token });
      const res = await call(null, "POST", "/oauth/token", { form, kind: "oauth", op: "token" });
      tally("oauth", res.status);
      if (res.status === 200) agent.access = res.json.access_token;
      else if (res.status !== 0 && res.status < 500) throw new Error(`oauth token: ${res.status}`);
    }
    return agent.access;
  }
  /**
   * `oauth`: the header that carries the agent's access token in place of its credit token (`authorization` as a
   * Bearer, or `x-credit-token`); `form`: a form-encoded body.
   */
  async function call(agent, method, p, { body, form, headers = {}, kind = "-", op = "-", pay = null, oauth } = {}) {
    const key = method === "POST" ? randomUUID() : null;
    let refused = 0; // 401s to an access token
    let resent = 0; // sent again for want of an answer (a kill cut it): the first may have been carried out
    // A key whose request was cut by a kill stays claimed until its lock lapses (5 minutes): wait that out.
    const deadline = Date.now() + 400_000;
    for (;;) {
      await up;
      const t = Date.now();
      const access = oauth ? await accessToken(agent) : null;
      let res;
      try {
        const init = {
          method,
          headers: {
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
            ...(agent && !oauth ? { "x-credit-token": agent.token } : {}),
            ...(key ? { "idempotency-key": key } : {}),
            ...headers,
            ...(oauth === "authorization" ? { authorization: `Bearer ${access}` } : {}),
            ...(oauth === "x-credit-token" ? { "x-credit-token": access } : {}),
          },
          body: form ? form.toString() : body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(60_000),
          redirect: "manual",
        };
        res = await (pay ?? fetch)(`${url}${p}`, init);
      } catch {
        if (Date.now() > deadline) {
          unresolved.push({ method, p, kind, op, why: "no answer" });
          return { status: 0, json: null, resent };
        }
        resent++;
        await sleep(500);
        continue;
      }
      // A POST's body cut by a kill is no answer: asked again under the same key, which replays it once kept. (A
      // GET's status is its answer: it was served, and charged if paid.)
      const text = await res.text().catch(() => (key ? null : ""));
      if (text === null && Date.now() < deadline) {
        resent++;
        await sleep(500);
        continue;
      }
      if (text === null) {
        unresolved.push({ method, p, kind, op, why: "answer cut" });
        return { status: 0, json: null, resent };
      }
      const inKill = inKillWindow(t) || inKillWindow(Date.now());
      const requestId = res.headers.get("x-request-id");
      answers.push({ t, status: res.status, kind, op, requestId, inKill });
      // Cut by the kill (wrangler's proxy answers 502/503 for a runtime that went away): unknown, ask again.
      const injected = res.status === 500 && text.includes("(injected)");
      const retryable = res.status >= 500 && inKill && !injected;
      const inFlight = res.status === 409 && text.includes("idempotency_in_flight");
      if (injected) injectedDeaths.push({ kind, op, requestId });
      else if (res.status >= 500 && !inKill)
        fiveHundreds.push({ t, method, p, status: res.status, requestId, text: text.slice(0, 300) });
      // An access token from before a restart: refused before the key is claimed, so sent again under the same key
      // (the attempt a kill cut may have been carried out: a new key would do it twice).
      if (oauth && res.status === 401 && refused++ < 2 && Date.now() < deadline) {
        if (agent.access === access) agent.access = null;
        continue;
      }
      if (
        (retryable || inFlight || (res.status === 503 && text.includes("restarted mid-request"))) &&
        Date.now() < deadline
      ) {
        if (retryable) resent++;
        await sleep(1000);
        continue;
      }
      if (retryable || inFlight) unresolved.push({ method, p, kind, op, why: `${res.status} ${text.slice(0, 120)}` });
      let json = null;
      try {
        json = JSON.parse(text);
      } catch {
        json = null;
      }
      if (oauth && res.status >= 200 && res.status < 300) oauthPaid++;
      return { status: res.status, json, headers: res.headers, injected, resent };
    }
  }

  // ---- the kinds, from the published examples ----
  const doc = await (await fetch(`${url}/openapi.json?kinds=all`)).json();
  const prices = await (await fetch(`${url}/v1/prices`)).json();
  const kindNames = prices.operations
    .filter((o) => o.unit === "day" && o.method === "POST" && /^\/v1\/[a-z0-9-]+$/.test(o.path))
    .map((o) => o.path.slice(4));
  const priced = new Set(prices.operations.filter((o) => Number(o.price_usd) > 0).map((o) => o.operation));
  const examples = new Map();
  const skipped = [];
  for (const kind of kindNames) {
    const example = doc.paths?.[`/v1/${kind}`]?.post?.requestBody?.content?.["application/json"]?.example;
    const text = JSON.stringify(example ?? {})
      .replaceAll("https://example.com", receiverUrl)
      .replaceAll('"example.com"', JSON.stringify(new URL(receiverUrl).host));
    if (/zvm_Example|zv_Example/.test(text)) skipped.push(kind);
    else examples.set(kind, JSON.parse(text));
  }

  // ---- what the agents did, for the end ----
  const created = []; // { agent, kind, id, mgmt, ended: false|"cancelled"|"expires", expiresAt }
  const acked = new Map(); // `${resourceId} ${operation}` → count of 2xx
  const ack = (id, operation) => acked.set(`${id} ${operation}`, (acked.get(`${id} ${operation}`) ?? 0) + 1);
  const counters = []; // { r, value }
  const journals = []; // { r, appended }
  const queues = []; // { r, pushed, acked }
  const wakeups = []; // { r, path, at }
  const bins = []; // { r, publicUrl, captured, resent }
  const links = []; // { r, publicUrl, clicks }
  const transferHosts = []; // { r }: transfers resources
  const transfers = []; // { r, id, key, seed }: S3 → S3 copies started
  const notifiers = []; // { r }: notify resources with a mailto:// channel
  const mails = []; // { r, title, sendId }: sends answered
  const watches = []; // { r, key }: watches of a flapping target
  const faults = new Map(); // fault → times injected

  /**
   * Injects test-faults.ts's `fault` into the resource's object, through the front; false when it could not (a kill).
   * Held in the object's memory, so a kill or an eviction clears it, as it would the process it stands for.
   */
  async function inject(r, fault) {
    if (!withFaults) return false;
    const res = await fetch(`${url}/__soak/faults/${r.id}`, {
      method: "POST",
      body: JSON.stringify(fault),
      signal: AbortSignal.timeout(30_000),
    }).catch(() => null);
    if (res?.status !== 204) return false;
    const name = Object.entries(fault)
      .filter(([k]) => k !== "reportWindowMs")
      .map(([k, v]) => (k === "dieAt" ? v : k))
      .join("+");
    faults.set(name, (faults.get(name) ?? 0) + 1);
    return true;
  }
  const perKind = new Map(); // kind → { calls, ok, c4xx, c5xx }
  const tally = (kind, status) => {
    const k = perKind.get(kind) ?? { calls: 0, ok: 0, c4xx: 0, c5xx: 0 };
    perKind.set(kind, k);
    k.calls++;
    if (status >= 200 && status < 300) k.ok++;
    else if (status >= 500 || status === 0) k.c5xx++;
    else k.c4xx++;
  };

  /** A create paid by credit token, by x402 (`pay`), or by an OAuth access token (OAUTH_SHARE of the rest). */
  async function create(agent, kind, body, pay = null) {
    const oauth = !pay && Math.random() < OAUTH_SHARE;
    const res = await call(oauth ? agent : null, "POST", `/v1/${kind}`, {
      body,
      kind,
      op: "create",
      pay,
      headers: pay || oauth ? {} : { authorization: `Bearer ${agent.token}` },
      oauth: oauth ? "authorization" : undefined,
    });
    tally(kind, res.status);
    if (res.status !== 201) return null;
    const r = {
      agent,
      kind,
      id: res.json.id,
      mgmt: res.json.management_token,
      ended: false,
      json: res.json,
      x402: !!pay,
    };
    created.push(r);
    if (!pay) ack(r.id, `${kind}.create`);
    return r;
  }
  /** An operation on a resource (`life`: one of the routes every kind shares, /v1/resources/{id}…). */
  async function op(r, method, suffix, body, opName, life = false) {
    const p = life ? `/v1/resources/${r.id}${suffix}` : `/v1/${r.kind}/${r.id}${suffix}`;
    const res = await call(r.agent, method, p, {
      body,
      headers: { authorization: `Bearer ${r.mgmt}` },
      kind: r.kind,
      op: opName,
      oauth: Math.random() < OAUTH_SHARE ? "x-credit-token" : undefined,
    });
    tally(r.kind, res.status);
    // Of the routes every kind shares only extend is charged (a kind's own op may be called "cancel" too).
    const charged = life ? opName === "extend" : priced.has(`${r.kind}.${opName}`);
    if (res.status >= 200 && res.status < 300 && charged) ack(r.id, `${r.kind}.${opName}`);
    return res;
  }

  const actions = [
    // every kind's life: create, read, extend, and cancel or expiry
    [
      4,
      async (a) => {
        const kind = pick([...examples.keys()]);
        const r = await create(a, kind, { ...examples.get(kind), ttl_seconds: Math.round(between(60, 180)) });
        if (!r) return;
        await op(r, "GET", "", undefined, "status", true);
        if (Math.random() < 0.3) {
          // the process dies after the extend's charge: the alarm (or the end) gives it back
          if (Math.random() < FAULT_SHARE) await inject(r, { dieAt: "extend-after-charge" });
          await op(r, "POST", "/extend", { ttl_seconds: 60 }, "extend", true);
        }
        if (Math.random() < 0.5) {
          // the process dies once the end is marked, or R2 refuses the end's deletes: the alarm finishes the end
          if (Math.random() < FAULT_SHARE) await inject(r, pick([{ dieAt: "end-after-mark" }, { failDrops: 2 }]));
          const res = await op(r, "DELETE", "", undefined, "cancel", true);
          if (res.status === 200 || res.injected) r.ended = "cancelled";
        } else r.ended = "expires";
      },
    ],
    [
      5,
      async (a) => {
        let c = pick(counters.filter((x) => x.r.agent === a));
        if (!c || Math.random() < 0.1) {
          const r = await create(a, "counters", { ttl_seconds: 3600 });
          if (!r) return;
          c = { r, value: 0 };
          counters.push(c);
        }
        const res = await op(c.r, "POST", "/increment", { by: 1 }, "increment");
        if (res.status === 200) c.value++;
      },
    ],
    [
      4,
      async (a) => {
        let j = pick(journals.filter((x) => x.r.agent === a));
        if (!j || Math.random() < 0.1) {
          const r = await create(a, "journals", { ttl_seconds: 3600 });
          if (!r) return;
          j = { r, appended: 0 };
          journals.push(j);
        }
        const res = await op(j.r, "POST", "/entries", { type: "soak", data: { i: j.appended } }, "append");
        if (res.status === 201 || res.status === 200) j.appended++;
      },
    ],
    [
      4,
      async (a) => {
        let q = pick(queues.filter((x) => x.r.agent === a));
        if (!q || Math.random() < 0.1) {
          const r = await create(a, "queues", { ttl_seconds: 3600, visibility_seconds: 3600 });
          if (!r) return;
          q = { r, pushed: 0, acked: 0 };
          queues.push(q);
        }
        const res = await op(q.r, "POST", "/messages", { body: { n: q.pushed } }, "push");
        if (res.status === 201 || res.status === 200) q.pushed++;
        if (Math.random() < 0.4) {
          const lease = await op(q.r, "POST", "/leases", { max_messages: 1, visibility_seconds: 3600 }, "lease");
          for (const m of lease.json?.items ?? lease.json?.messages ?? []) {
            const done = await op(q.r, "POST", `/leases/${m.lease_id}/ack`, {}, "ack");
            if (done.status === 200) q.acked++;
          }
        }
      },
    ],
    [
      3,
      async (a) => {
        if (Date.now() > endAt - 60_000) return; // due within the run
        const key = randomUUID();
        const at = new Date(Date.now() + between(5_000, 60_000)).toISOString();
        const r = await create(a, "wakeups", { url: `${receiverUrl}/w/${key}`, at, ttl_seconds: 3600 });
        if (!r) return;
        wakeups.push({ r, path: `/w/${key}`, at: Date.parse(at) });
        // The firing's send meets the queue's faults: skipped after the commit (the dispatch grace sends it), refused
        // (re-queued), or accepted and lost (re-sent once its report window, shortened to 20 s here, passes).
        if (Math.random() < 0.3)
          await inject(r, pick([{ skipDispatches: 1 }, { refuseSends: 2 }, { loseSends: 1, reportWindowMs: 20_000 }]));
      },
    ],
    [
      3,
      async (a) => {
        let b = pick(bins.filter((x) => x.r.agent === a));
        if (!b || Math.random() < 0.1) {
          const r = await create(a, "bins", { ttl_seconds: 3600 });
          if (!r?.json.urls?.public) return;
          b = { r, publicUrl: r.json.urls.public, captured: 0, resent: 0 };
          bins.push(b);
        }
        const res = await call(null, "POST", new URL(b.publicUrl).pathname, {
          body: { soak: b.captured },
          kind: "bins",
          op: "capture(public)",
        });
        tally("bins", res.status);
        if (res.status >= 200 && res.status < 300) b.captured++;
        // A public address takes no Idempotency-Key: a request bin keeps each request that arrives, a resent one too.
        b.resent += res.resent;
      },
    ],
    [
      2,
      async (a) => {
        let l = pick(links.filter((x) => x.r.agent === a));
        if (!l || Math.random() < 0.1) {
          const r = await create(a, "links", { target_url: `${receiverUrl}/page`, ttl_seconds: 3600 });
          if (!r?.json.urls?.public) return;
          l = { r, publicUrl: r.json.urls.public, clicks: 0 };
          links.push(l);
        }
        const res = await call(null, "GET", new URL(l.publicUrl).pathname, { kind: "links", op: "click(public)" });
        tally("links", res.status);
        if (res.status >= 300 && res.status < 400) l.clicks++;
      },
    ],
    [
      1,
      async (a) => {
        // A create paid by x402: one signed payment per call.
        await create(a, "counters", { ttl_seconds: 3600 }, a.pay);
      },
    ],
    [
      1,
      async (a) => {
        // A copy between two keys of the S3-compatible peer, by one of the agent's transfers resources.
        let t = pick(transferHosts.filter((x) => x.r.agent === a));
        if (!t || Math.random() < 0.1) {
          const r = await create(a, "transfers", { ttl_seconds: 3600 });
          if (!r) return;
          t = { r };
          transferHosts.push(t);
        }
        const seed = pick(s3.seeded);
        const key = `copy/${randomUUID()}.bin`;
        const res = await op(t.r, "POST", "/transfers", { source: s3.at(seed.key), destination: s3.at(key) }, "start");
        if (res.status >= 200 && res.status < 300) transfers.push({ r: t.r, id: res.json.transfer_id, key, seed });
      },
    ],
    [
      1,
      async (a) => {
        // A send by notify's mailto:// channel to the SMTP peer, its subject unique.
        let n = pick(notifiers.filter((x) => x.r.agent === a));
        if (!n || Math.random() < 0.1) {
          const r = await create(a, "notify", {
            channels: [smtp.channel(`agent${a.n}@example.com`)],
            ttl_seconds: 3600,
          });
          if (!r) return;
          n = { r };
          notifiers.push(n);
        }
        const title = `soak ${randomUUID()}`;
        const res = await op(n.r, "POST", "/sends", { title, body: "from the soak" }, "send");
        if (res.status >= 200 && res.status < 300) mails.push({ r: n.r, title, sendId: res.json.send_id });
      },
    ],
    [
      1,
      async (a) => {
        // Watches of a target whose health flips at random; a few per agent (a check a minute), and checks on demand.
        const mine = watches.filter((x) => x.r.agent === a);
        if (mine.length >= Math.max(3, minutes / 5) || Date.now() > endAt - 120_000) {
          const w = pick(mine);
          if (w && Math.random() < 0.3) await op(w.r, "POST", "/checks", {}, "check");
          return;
        }
        const key = randomUUID();
        const check = { type: "http_status", url: `${target.url}/h/${key}` };
        const r = await create(a, "watches", { check, interval_seconds: 60, timeout_ms: 5000, ttl_seconds: 3600 });
        if (r) watches.push({ r, key });
      },
    ],
  ];
  const weightTotal = actions.reduce((s, [w]) => s + w, 0);
  const chooseAction = () => {
    let x = Math.random() * weightTotal;
    for (const [w, fn] of actions) if ((x -= w) < 0) return fn;
    return actions[0][1];
  };

  // ---- the run ----
  const startedAt = Date.now();
  const endAt = startedAt + durationMs;
  const purchases = [];
  const agentList = [];
  for (let i = 0; i < agents; i++) {
    const token = await buyCredits(url, 50);
    purchases.push(50);
    const account = privateKeyToAccount(generatePrivateKey());
    const client = registerExactEvmScheme(new x402Client(), { signer: account }).setSpendControls({
      maxAmountPerPayment: "$1",
    });
    agentList.push({ n: i, token, bought: 50, pay: wrapFetchWithPayment(fetch, client) });
  }
  log(
    `${agents} agents on ${url} (state ${state}); ${examples.size} kinds from their examples (skipped: ` +
      `${skipped.join(", ") || "none"}); ${minutes} min, kills every ${killMin}–${killMax} s`,
  );
  // Kill to kill, not restart to kill: a slow restart (2 minutes on a loaded machine) does not stretch the cadence.
  const killer = (async () => {
    for (let last = startedAt; ;) {
      const at = last + between(killMin, killMax) * 1000;
      if (at > endAt - 30_000) return;
      await sleep(Math.max(0, at - Date.now()));
      last = Date.now();
      await killAndRestart();
    }
  })();
  const actionErrors = new Map();
  await Promise.all(
    agentList.map(async (a) => {
      while (Date.now() < endAt) {
        try {
          await chooseAction()(a);
        } catch (err) {
          const m = String(err?.message ?? err).slice(0, 200);
          actionErrors.set(m, (actionErrors.get(m) ?? 0) + 1);
        }
      }
    }),
  );
  await killer;
  log(
    `traffic stopped after ${((Date.now() - startedAt) / 60_000).toFixed(1)} min: ${answers.length}` +
      ` answers, ${kills.length} kills`,
  );

  // ---- quiescence: every wakeup and mail arrived, or 3 minutes with none arriving (past the last one due) ----
  // A backlog the local queue built under the run's load (see queueBatchSize above) drains after it; the wait ends
  // when it stops draining, at most 30 minutes.
  const lastDue = Math.max(0, ...wakeups.map((w) => w.at));
  const arrived = () => byPath.size + smtp.subjects.size;
  const waiting = () => wakeups.some((w) => !byPath.has(w.path)) || mails.some((m) => !smtp.subjects.has(m.title));
  const drainStart = Date.now();
  let progress = { at: Math.max(Date.now(), lastDue), count: arrived() };
  while (waiting() && Date.now() < progress.at + 180_000 && Date.now() < drainStart + 30 * 60_000) {
    await sleep(1000);
    if (arrived() !== progress.count) progress = { at: Math.max(Date.now(), lastDue), count: arrived() };
  }
  const drainedIn = (Date.now() - drainStart) / 1000;
  const drained = waiting() ? "stopped draining" : "drained";
  await sleep(5_000);
  clearInterval(memoryTimer);
  clearInterval(heapTimer);
  cdp?.close();

  // ---- reconcile ----
  const rows = [];
  const row = (invariant, ok, detail) => rows.push({ invariant, ok, detail });

  // stored data
  let counterBad = 0;
  for (const c of counters) {
    const res = await op(c.r, "GET", "", undefined, "get");
    if (res.json?.value !== c.value)
      (counterBad++, log(`counter ${c.r.id}: value ${res.json?.value}, acknowledged increments ${c.value}`));
  }
  row(
    "counters equal their acknowledged increments",
    counterBad === 0,
    `${counters.length - counterBad}/${counters.length}`,
  );
  let journalBad = 0;
  for (const j of journals) {
    const res = await op(j.r, "GET", "/entries?from_seq=1&limit=100", undefined, "read");
    const items = res.json?.items ?? res.json?.entries ?? [];
    let prev = "0".repeat(64);
    let ok = items.length === Math.min(100, j.appended);
    for (const [n, e] of items.entries()) {
      const hash = createHash("sha256")
        .update([prev, String(e.seq), e.time, e.type ?? "", JSON.stringify(e.data)].join("\n"))
        .digest("hex");
      if (e.seq !== n + 1 || e.hash !== hash) ok = false;
      prev = e.hash;
    }
    if (!ok)
      (journalBad++,
        log(
          `journal ${j.r.id}: ${items.length} entries read, ${j.appended} acknowledged; chain ` +
            `${JSON.stringify(items.slice(0, 2))}`,
        ));
  }
  row(
    "journal chains verify and hold the acknowledged appends",
    journalBad === 0,
    `${journals.length - journalBad}/${journals.length}`,
  );
  let queueBad = 0;
  for (const q of queues) {
    const res = await op(q.r, "GET", "/stats", undefined, "stats");
    const s = res.json ?? {};
    const held = (s.visible ?? 0) + (s.in_flight ?? s.leased ?? 0) + (s.delayed ?? 0);
    if (held !== q.pushed - q.acked)
      (queueBad++, log(`queue ${q.r.id}: stats ${JSON.stringify(s)}, pushed ${q.pushed}, acked ${q.acked}`));
  }
  row("queues hold what was pushed and not acked", queueBad === 0, `${queues.length - queueBad}/${queues.length}`);
  let binBad = 0;
  let binResent = 0;
  for (const b of bins) {
    const res = await op(b.r, "GET", "/captures?limit=1", undefined, "list");
    const seen = res.json?.items?.[0]?.seq ?? 0;
    if (seen > b.captured) binResent++;
    if (seen < b.captured || seen > b.captured + b.resent)
      (binBad++,
        log(`bin ${b.r.id}: newest capture ${seen}, answered captures ${b.captured}, resent after a cut ${b.resent}`));
  }
  row(
    "bins hold every answered capture",
    binBad === 0,
    `${bins.length - binBad}/${bins.length}; ${binResent} also hold a request sent again after a kill cut its answer`,
  );

  // deliveries
  const missing = wakeups.filter((w) => !byPath.has(w.path));
  const repeats = [...deliveries.values()].filter((d) => d.ok > 1).length;
  row(
    "every wakeup delivered (a 200 at the receiver) at least once",
    missing.length === 0,
    `${wakeups.length - missing.length}/${wakeups.length}; ${repeats} webhook-ids answered 200 more than ` +
      `once (at least once)`,
  );
  for (const w of missing.slice(0, 5)) log(`wakeup ${w.r.id} due ${new Date(w.at).toISOString()} never arrived`);

  // resource state
  let stuck = 0;
  for (const w of wakeups) {
    const res = await op(w.r, "GET", "", undefined, "get");
    if (res.json?.status !== "delivered")
      (stuck++, log(`wakeup ${w.r.id}: ${res.status} ${JSON.stringify(res.json)?.slice(0, 300)}`));
  }
  row("no wakeup left scheduled or firing", stuck === 0, `${wakeups.length - stuck}/${wakeups.length} delivered`);

  // transfers against the S3-compatible peer: completed, and the copy is the seed
  let transferBad = 0;
  for (const t of transfers) {
    const res = await op(t.r, "GET", `/transfers/${t.id}`, undefined, "get_transfer");
    const copy = await s3.digest(t.key);
    if (res.json?.status !== "completed" || copy?.sha256 !== t.seed.sha256)
      (transferBad++,
        log(`transfer ${t.r.id} ${t.id}: ${res.json?.status} ${res.json?.error ?? ""}, copy ${JSON.stringify(copy)}`));
  }
  row(
    "every transfer completed, its copy equal to its source",
    transferBad === 0,
    `${transfers.length - transferBad}/${transfers.length} (S3 → S3 at the local peer)`,
  );

  // notify's mailto:// sends: each arrived at the SMTP peer, and each send says delivered
  let mailBad = 0;
  for (const m of mails) {
    const res = await op(m.r, "GET", `/sends/${m.sendId}`, undefined, "get_send");
    const summary = res.json?.summary ?? {};
    if (!smtp.subjects.has(m.title) || summary.delivered !== 1 || summary.pending !== 0)
      (mailBad++,
        log(`notify ${m.r.id} ${m.sendId}: ${smtp.subjects.get(m.title) ?? 0} mails, ${JSON.stringify(summary)}`));
  }
  const mailRepeats = mails.filter((m) => (smtp.subjects.get(m.title) ?? 0) > 1).length;
  row(
    "every notify send arrived by SMTP and reads delivered",
    mailBad === 0,
    `${mails.length - mailBad}/${mails.length}; ${mailRepeats} arrived more than once (at least once)`,
  );

  // watches of the flapping target: each recorded check is an answer the target gave then, the state follows the last
  // check, and none has stopped checking
  let watchBad = 0;
  let checked = 0;
  let flips = 0;
  let unanswered = 0;
  for (const w of watches) {
    const got = await op(w.r, "GET", "", undefined, "get");
    const hist = await op(w.r, "GET", "/checks?limit=100", undefined, "history");
    const items = hist.json?.items ?? [];
    const answers = target.answers(w.key);
    const problems = [];
    for (const c of items) {
      const at = Date.parse(c.at);
      if (c.status === null) {
        unanswered++;
        continue;
      }
      if (!answers.some((x) => x.status === c.status && x.t >= at - 2_000 && x.t <= at + 15_000))
        problems.push(`check ${c.seq} at ${c.at} recorded ${c.status}, which the target did not answer then`);
    }
    checked += items.length;
    flips += items.filter((c, i) => i > 0 && c.ok !== items[i - 1].ok).length;
    const st = got.json ?? {};
    const last = st.last_check;
    if (!last) problems.push(`no check recorded (${st.state})`);
    else {
      if (st.state !== (last.ok ? "up" : "down"))
        problems.push(`state ${st.state} after a check ${last.ok ? "up" : "down"}`);
      if (Date.now() - Date.parse(last.at) > 210_000)
        problems.push(`last check at ${last.at}, next ${st.next_check_at}`);
    }
    if (problems.length) (watchBad++, log(`watch ${w.r.id}: ${problems.slice(0, 3).join("; ")}`));
  }
  row(
    "every watch's checks match its target, its state follows them, none stuck",
    watchBad === 0,
    `${watches.length - watchBad}/${watches.length}; ${checked} checks, ${flips} flips between up and ` +
      `down, ${unanswered} without an answer`,
  );

  // money: every resource still open is cancelled first, so the balances and receipts are final
  for (const r of created.filter((x) => x.ended !== "cancelled")) {
    const res = await op(r, "DELETE", "", undefined, "cancel", true);
    if (res.status === 200) r.ended = "cancelled";
    else if (res.status === 410) r.ended = "expired";
    else log(`${r.kind} ${r.id}: cancel answered ${res.status}`);
  }
  const charges = new Map();
  let moneyBad = 0;
  const moneyLines = [];
  for (const a of agentList) {
    const bal = await call(a, "GET", "/v1/credits/balance", {
      headers: { authorization: `Bearer ${a.token}` },
      kind: "money",
      op: "balance",
    });
    const rec = await call(a, "GET", `/v1/receipts?since=${new Date(startedAt - 3_600_000).toISOString()}`, {
      headers: { authorization: `Bearer ${a.token}` },
      kind: "money",
      op: "receipts",
    });
    const statement = rec.json?.statement
      ? typeof rec.json.statement === "string"
        ? JSON.parse(rec.json.statement)
        : rec.json.statement
      : null;
    if (!statement) {
      moneyBad++;
      moneyLines.push(`agent ${a.n}: receipts ${rec.status}`);
      continue;
    }
    let total = 0;
    for (const c of statement.charges) {
      total += Math.round(Number(c.amount_usd) * 1e6);
      const k = `${c.resource_id} ${c.operation}`;
      charges.set(k, (charges.get(k) ?? 0) + 1);
    }
    const balance = Math.round(Number(bal.json?.balance_usd) * 1e6);
    if (balance !== a.bought * 1e6 - total) {
      moneyBad++;
      moneyLines.push(`agent ${a.n}: balance ${bal.json?.balance_usd}, bought ${a.bought}, charged ${total / 1e6}`);
    }
  }
  row(
    "each balance equals purchases minus charges (holds settled)",
    moneyBad === 0,
    moneyLines.join("; ") || `${agentList.length} tokens`,
  );
  const mismatched = [];
  for (const k of new Set([...charges.keys(), ...acked.keys()])) {
    const [id, operation] = k.split(" ");
    // Reads whose answer was free carry no charge; an op's name in the receipts may differ from the route's.
    if ((charges.get(k) ?? 0) !== (acked.get(k) ?? 0))
      mismatched.push(`${id} ${operation}: charged ${charges.get(k) ?? 0}, answered 2xx ${acked.get(k) ?? 0}`);
  }
  row(
    "every charge belongs to an answered 2xx, once",
    mismatched.length === 0,
    mismatched.length
      ? `${mismatched.length} mismatches, e.g. ${mismatched.slice(0, 4).join("; ")}`
      : `${[...charges.values()].reduce((s, n) => s + n, 0)} charges`,
  );

  // ended resources: 410, and R2 empty once every resource has ended
  let notGone = 0;
  for (const r of created.slice(0, 300)) {
    const res = await op(r, "GET", "", undefined, "status(ended)", true);
    if (res.status !== 410) (notGone++, log(`${r.kind} ${r.id} ended (${r.ended}) answers ${res.status}`));
  }
  row(
    "every ended resource answers 410",
    notGone === 0,
    `${Math.min(300, created.length) - notGone} of ${created.length} checked (` +
      `${created.filter((x) => x.ended === "expired").length} had expired, the rest cancelled)`,
  );
  await sleep(15_000); // R2 deletes behind the ends
  // Bodies of deliveries under way when their resource ended outlive it until the daily sweep (ended-bodies.ts).
  const outlived = new Set(
    await sqliteRows(path.join(state, "v3", "d1"), ["SELECT 'object ' || key FROM ended_bodies"]),
  );
  const r2Left = (await sqliteRows(path.join(state, "v3", "r2"), R2_LEFT)).filter((k) => !outlived.has(k));
  const r2Files = countFiles(path.join(state, "v3", "r2"), (f) => f.includes(`${path.sep}blobs${path.sep}`));
  row(
    "R2 holds nothing once every resource ended",
    r2Left.length === 0,
    `${r2Left.length} keys left${r2Left.length ? ` (${r2Left.slice(0, 4).join(", ")})` : ""}; ${r2Files}` +
      ` blob files on disk; ${outlived.size} bodies kept for deliveries that outlived their resource`,
  );

  // answers
  row(
    "no 5xx outside the kill windows",
    fiveHundreds.length === 0,
    `${fiveHundreds.length} of ${answers.length} answers (besides ${injectedDeaths.length} 500s of injected deaths)${
      fiveHundreds.length
        ? `: ${fiveHundreds
            .slice(0, 3)
            .map((f) => `${f.status} ${f.method} ${f.p} ${f.requestId} ${f.text}`)
            .join(" | ")}`
        : ""
    }`,
  );
  row(
    "every call got a definitive answer",
    unresolved.length === 0,
    `${unresolved.length} unresolved${
      unresolved.length
        ? `: ${unresolved
            .slice(0, 3)
            .map((u) => `${u.method} ${u.p} ${u.why}`)
            .join(" | ")}`
        : ""
    }`,
  );

  const kindsOf = (lines) =>
    [...new Set(lines.map((l) => l.replace(/wdErrId = \w+|req_\w+|\d+/g, "…")))].slice(0, 3).join(" / ");
  const counted = (lines, what) => `${lines.length} ${what}${lines.length ? `: ${kindsOf(lines)}` : ""}`;
  row(
    "every error answered or logged with its request id, none escaped",
    errorLines.ours.length === 0 && errorLines.escaped.length === 0,
    `${counted(errorLines.ours, "service error lines in requests")}; ${counted(errorLines.escaped, "uncaught")}; ` +
      `${counted(errorLines.background, "logged by alarms or the queue consumer")}; ` +
      `${counted(errorLines.runtime, "workerd's own (docs/operations.md)")}`,
  );

  // memory: the heap after GC is asserted (what our code holds); resident memory is reported against the objects open
  const quarter = (xs) => Math.max(1, Math.floor(xs.length / 4));
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
  const firstLast = (xs) => [median(xs.slice(0, quarter(xs))), median(xs.slice(-quarter(xs)))];
  const [heapFirst, heapLast] = firstLast(heaps.map((h) => h.heap));
  // One sample a minute: fewer than 8 (the inspector never reconnected after a kill) measure nothing.
  const heapMeasured = heaps.length >= 8;
  row(
    "isolate heap after GC flat (last quarter ≤ 1.5 × first)",
    !assertMemory || (heapMeasured && heapLast <= heapFirst * 1.5),
    `${heapFirst.toFixed(1)} → ${heapLast.toFixed(1)} MiB (${heaps.length} samples` +
      `${heapMeasured ? "" : ", too few to tell"}${assertMemory ? "" : "; not asserted in the short profile"})`,
  );
  const [rssFirst, rssLast] = firstLast(memory.map((m) => m.rss));
  const [objFirst, objLast] = firstLast(memory.map((m) => m.objects));
  const fit = linearFit(memory.map((m) => [m.objects, m.rss]));
  const [atEqualFirst, atEqualLast] = firstLast(memory.map((m) => m.rss - fit.slope * m.objects));
  row(
    "resident memory follows the objects workerd holds open (reported)",
    true,
    `RSS ${rssFirst.toFixed(0)} → ${rssLast.toFixed(0)} MiB with ${objFirst} → ${objLast} objects open; ` +
      `${fit.slope.toFixed(2)} MiB per open object (r = ${fit.r.toFixed(2)}); at equal objects ` +
      `${atEqualFirst.toFixed(0)} → ${atEqualLast.toFixed(0)} MiB (${memory.length} samples)`,
  );

  // The samples, for a closer look at memory (bench/README.md's reading of the 30-minute run came from these).
  if (env.SOAK_SAMPLES) await writeFile(env.SOAK_SAMPLES, JSON.stringify({ startedAt, kills, memory, heaps }, null, 1));

  // ---- the tables ----
  const lines = [];
  const gaps = kills.map((k, i) => Math.round((k.at - (i ? kills[i - 1].at : startedAt)) / 1000));
  lines.push(
    `soak: ${minutes} min, ${agents} agents, ${kills.length} kills, ${answers.length} answers, ` +
      `${created.length} resources of ${new Set(created.map((r) => r.kind)).size} kinds, ` +
      `${new Date().toISOString()}`,
    `kills at ${gaps.join(", ")} s after the previous one (the first after the start); restarts took ` +
      `${kills.map((k) => (k.up === null ? "?" : Math.round((k.up - 10_000 - k.at) / 1000))).join(", ")} s`,
    `paid: ${oauthPaid} 2xx answers to calls paid with an OAuth access token, ` +
      `${created.filter((r) => r.x402).length} creates by x402, the rest by credit token`,
    `deliveries: what was still on its way when the traffic stopped ${drained} in ${drainedIn.toFixed(0)} s`,
    `faults injected (durable-objects/resource/test-faults.ts): ` +
      `${[...faults].map(([f, n]) => `${f} ${n}`).join(", ") || "none"}`,
  );
  lines.push("", "| kind | calls | 2xx | 4xx | 5xx or none |", "|---|---|---|---|---|");
  for (const [kind, k] of [...perKind].sort()) lines.push(`| ${kind} | ${k.calls} | ${k.ok} | ${k.c4xx} | ${k.c5xx} |`);
  lines.push("", "| invariant | holds | detail |", "|---|---|---|");
  for (const r of rows)
    lines.push(`| ${r.invariant} | ${r.ok ? "yes" : "**no**"} | ${r.detail.replaceAll("|", "/")} |`);
  if (actionErrors.size) lines.push("", "client errors:", ...[...actionErrors].map(([m, n]) => `  ${n}× ${m}`));
  const text = lines.join("\n");

  await service.stop();
  await Promise.all([engines.stop(), proxy.missing ? undefined : proxy.stop(), s3.stop(), smtp.stop(), target.stop()]);
  await rm(state, { recursive: true, force: true });
  receiver.close();
  process.chdir(home);
  await rm(sourceDir, { recursive: true, force: true });
  return { rows, failures: rows.filter((r) => !r.ok), text, output: service.output() };
}

/** The keys (and open multipart uploads) local R2 still holds: its metadata is SQLite. */
const R2_LEFT = [
  "SELECT 'object ' || key FROM _mf_objects",
  "SELECT 'upload ' || key FROM _mf_multipart_uploads WHERE state = 0",
];

/** What `queries` answer in every SQLite file below `dir` (local R2's and D1's state), with the sqlite3 command. */
async function sqliteRows(dir, queries) {
  const files = [];
  const walk = (d) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d)) {
      const p = path.join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith(".sqlite")) files.push(p);
    }
  };
  walk(dir);
  const rows = [];
  for (const f of files) {
    for (const q of queries) {
      const { stdout } = await run("sqlite3", [f, q]).catch(() => ({ stdout: "" }));
      rows.push(...stdout.split("\n").filter(Boolean));
    }
  }
  return rows;
}

/** Least squares through points [x, y]: slope and Pearson's r (0 and NaN without spread). */
function linearFit(points) {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [x, y] of points) ((sxy += (x - mx) * (y - my)), (sxx += (x - mx) ** 2), (syy += (y - my) ** 2));
  return { slope: sxx ? sxy / sxx : 0, r: sxx && syy ? sxy / Math.sqrt(sxx * syy) : NaN };
}

/** A process's resident size in KiB (0 once it is gone). */
async function rssOf(pid) {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
}

/** Files below `dir` for which `keep` holds. */
function countFiles(dir, keep) {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const entry of readdirSync(dir)) {
    const p = path.join(dir, entry);
    if (statSync(p).isDirectory()) n += countFiles(p, keep);
    else if (keep(p)) n++;
  }
  return n;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await soak();
  console.log(`\n${result.text}`);
  if (result.failures.length) process.exitCode = 1;
}

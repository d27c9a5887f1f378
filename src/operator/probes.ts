/**
 * The readiness report's probes, one per thing the service needs: each asks the real binding or
 * peer the cheapest question that proves it answers, and never throws. `fail` is a part the
 * service needs that does not answer; `warn` is an optional part not configured (the routes that
 * need it answer 503 `engine_unavailable` and charge nothing).
 */
import type { Env } from "../env";
import { accountStub, resourceStub } from "../stubs";
import { signingKeys } from "../auth/signing-keys";
import { seal } from "../auth/sealing";
import { egressProxy } from "../delivery/connect-proxy";
import { openSocket } from "../delivery/sockets";
import { isDevelopment } from "../env";
import { deploymentProblems } from "./config-guard";
import { LATEST_MIGRATION } from "./schema-version";
import type { ProbeMessage } from "../delivery/messages";
import { engineFetch, type EngineFetch } from "../engines/endpoint";

export interface Probe {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  version?: string;
}

const PEER_TIMEOUT_MS = 5_000;
/** The probe objects: one named instance per class, so readiness makes no new object after the first. */
const PROBE_ID = "_readiness";

const ok = (name: string, detail: string, version?: string): Probe => ({
  name,
  status: "ok",
  detail,
  ...(version ? { version } : {}),
});
const fail = (name: string, detail: string): Probe => ({ name, status: "fail", detail });
const why = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 200);

export function configuration(env: Env): Probe {
  const problems = deploymentProblems(env);
  if (!problems.length)
    return ok(
      "configuration",
      isDevelopment(env)
        ? `${env.ENVIRONMENT}: development conveniences on`
        : `${env.ENVIRONMENT}: every required setting is set`,
    );
  return fail("configuration", problems.map((p) => `${p.setting} ${p.problem}`).join("; "));
}

export async function database(env: Env): Promise<Probe> {
  try {
    const row = await env.DB.prepare("SELECT name FROM d1_migrations ORDER BY id DESC LIMIT 1").first<{
      name: string;
    }>();
    if (!row)
      return fail("d1", "reachable, but no migration has been applied: npx wrangler d1 migrations apply DB --remote");
    if (row.name !== LATEST_MIGRATION)
      return fail(
        "d1",
        `reachable, migrated to ${row.name}; this code needs ${LATEST_MIGRATION}: npx wrangler d1 ` +
          `migrations apply DB --remote`,
      );
    return ok("d1", "reachable and migrated", row.name);
  } catch (err) {
    if (/no such table: d1_migrations/.test(why(err)))
      return fail("d1", "reachable, but no migration has been applied: npx wrangler d1 migrations apply DB --remote");
    return fail("d1", `not answering: ${why(err)}`);
  }
}

export async function bucket(env: Env): Promise<Probe> {
  try {
    await env.BUCKET.head(`${PROBE_ID}/probe`);
    return ok("r2", "reachable");
  } catch (err) {
    return fail("r2", `not answering: ${why(err)}`);
  }
}

/** A probe message the consumer acknowledges unread (src/delivery/consumer.ts). */
export async function queue(env: Env): Promise<Probe> {
  try {
    await env.DELIVERIES.send({ type: "probe" } satisfies ProbeMessage);
    return ok("queue", "accepts messages");
  } catch (err) {
    return fail("queue", `refuses messages: ${why(err)}`);
  }
}

/** One RPC to each class; the answer (a refusal: there is no such token or resource) proves the object ran. */
export async function durableObjects(env: Env): Promise<Probe> {
  try {
    await Promise.all([
      accountStub(env, PROBE_ID).authenticate({ tokenId: PROBE_ID, tokenHash: "" }),
      resourceStub(env, PROBE_ID).status(""),
    ]);
    return ok("durable_objects", "AccountObject and ResourceObject answer");
  } catch (err) {
    return fail("durable_objects", `not answering: ${why(err)}`);
  }
}

async function getText(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(PEER_TIMEOUT_MS) });
  return { status: res.status, text: (await res.text()).slice(0, 2000) };
}

/**
 * A Gotenberg-compatible engine: `/health` (`{ status: "up" | "down", details: { <engine>: { status } } }`)
 * and `/version` (text). Only the engines `needs` names decide: an OCR-only host has no chromium.
 */
async function engineAt(name: string, send: EngineFetch, needs: string[] | null): Promise<Probe> {
  const get = (path: string) =>
    send(path, { signal: AbortSignal.timeout(PEER_TIMEOUT_MS) }).then(async (r) => ({
      status: r.status,
      text: (await r.text()).slice(0, 2000),
    }));
  try {
    const health = await get("/health");
    const body = JSON.parse(health.text || "{}") as { status?: string; details?: Record<string, { status?: string }> };
    const down = Object.entries(body.details ?? {})
      .filter(([n, d]) => (needs === null || needs.includes(n)) && d?.status !== "up")
      .map(([n]) => n);
    const version = await get("/version").then(
      (v) => (v.status === 200 ? v.text.trim().slice(0, 100) : undefined),
      () => undefined,
    );
    const up = needs ? down.length === 0 : health.status === 200 && body.status === "up";
    return up
      ? ok(name, "up", version)
      : fail(name, `answers ${health.status}${down.length ? `; down: ${down.join(", ")}` : ""}`);
  } catch (err) {
    return fail(name, `not reachable: ${why(err)}`);
  }
}

export async function engines(env: Env): Promise<Probe[]> {
  const out: Promise<Probe>[] = [];
  if (env.BROWSER_RENDERING_ACCOUNT_ID && env.BROWSER_RENDERING_API_TOKEN)
    out.push(Promise.resolve(ok("engine:browser_rendering", "configured (PDFs)")));
  const gotenberg = engineFetch(env, "gotenberg");
  if (gotenberg) out.push(engineAt("engine", gotenberg, null));
  // OCR beside Gotenberg, at an address of its own: asked only about what OCR needs.
  if (!env.ENGINE_CONTAINER && env.OCR_ENGINE_URL && env.OCR_ENGINE_URL !== env.ENGINE_URL)
    out.push(engineAt("engine:ocr", engineFetch(env, "ocr")!, ["tesseract", "pdftoppm"]));
  if (!out.length)
    return [
      {
        name: "engine",
        status: "warn",
        detail: "none configured: pdf, ocr and convert answer 503 (set ENGINE_URL, or bind ENGINE_CONTAINER)",
      },
    ];
  return Promise.all(out);
}

/** The forward proxy answers on its port; its `Server` header, when it sends one, is its version. */
export async function egress(env: Env): Promise<Probe> {
  let proxy: ReturnType<typeof egressProxy>;
  try {
    proxy = egressProxy(env);
  } catch (err) {
    return fail("egress_proxy", why(err));
  }
  if (!proxy)
    return {
      name: "egress_proxy",
      status: "warn",
      detail: "not configured: egress-connectors answer 503 (set EGRESS_PROXY_URL)",
    };
  const socket = await openSocket({ hostname: proxy.hostname, port: proxy.port });
  try {
    const writer = socket.writable.getWriter();
    const reader = socket.readable.getReader();
    writer.closed.catch(() => undefined);
    reader.closed.catch(() => undefined);
    await writer.write(new TextEncoder().encode("OPTIONS * HTTP/1.0\r\n\r\n"));
    const first = await Promise.race([
      reader.read(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer in 5 s")), PEER_TIMEOUT_MS)),
    ]);
    const head = new TextDecoder().decode(first.value ?? new Uint8Array());
    if (!head.startsWith("HTTP/")) return fail("egress_proxy", "answered something that is not HTTP");
    return ok("egress_proxy", "answers", /^server:\s*(.+)$/im.exec(head)?.[1]?.trim());
  } catch (err) {
    return fail("egress_proxy", `not reachable: ${why(err)}`);
  } finally {
    await socket.close().catch(() => undefined);
  }
}

/** Each key loads as the code will use it (development keys are generated per isolate). */
export async function keys(env: Env): Promise<Probe> {
  try {
    // The TSA signer (pkijs) is loaded by this probe and by the notary, not at start-up.
    const { tsaSigner } = await import("../kinds/time/notary/tsa-signer");
    const [signing, tsa] = await Promise.all([signingKeys(env), tsaSigner(env)]);
    seal(env, "readiness");
    return ok(
      "keys",
      `signing kid ${signing.current.kid}` +
        `${signing.published.length > 1 ? " (a rotation is under way)" : ""}; TSA ` +
        `${tsa ? "loaded" : "missing"}; encryption at rest loaded`,
    );
  } catch (err) {
    return fail("keys", why(err));
  }
}

/** The way payments settle: the facilitator's `/supported` lists the network, or the RPC node is on the chain. */
export async function settlement(env: Env): Promise<Probe> {
  const mode = env.X402_SETTLEMENT;
  try {
    if (mode === "none")
      return isDevelopment(env)
        ? ok("settlement", "none (development: nothing moves on chain)")
        : fail("settlement", "none is refused outside development");
    if (mode === "facilitator") {
      const res = await getText(new URL("supported", env.FACILITATOR_URL.replace(/\/?$/, "/")).href);
      if (res.status !== 200) return fail("settlement", `the facilitator's /supported answered ${res.status}`);
      const listed = res.text.includes(`"${env.X402_NETWORK}"`) || res.text.includes(`"eip155:${env.X402_CHAIN_ID}"`);
      return listed
        ? ok("settlement", `facilitator settles ${env.X402_NETWORK}`)
        : fail("settlement", `the facilitator does not list ${env.X402_NETWORK}`);
    }
    if (mode === "direct") {
      const res = await fetch(env.RPC_URL, {
        method: "POST",
        headers: { "content-type": "application/json" },
        signal: AbortSignal.timeout(PEER_TIMEOUT_MS),
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      const chain = Number(((await res.json()) as { result?: string }).result);
      return chain === Number(env.X402_CHAIN_ID)
        ? ok("settlement", `direct through an RPC node on chain ${chain}`)
        : fail("settlement", `the RPC node is on chain ${chain}, not ${env.X402_CHAIN_ID}`);
    }
    return fail("settlement", `unknown mode ${JSON.stringify(mode)}`);
  } catch (err) {
    return fail("settlement", `not reachable: ${why(err)}`);
  }
}

/**
 * A server-side fetch on a caller's behalf (a snapshot, an attested fetch, an
 * object's source_url): every hop through the egress guard, redirects followed
 * by hand so each target is checked, a timeout, and the body read up to a cap.
 */
import type { Env } from "../env";
import { AppError } from "../http/errors";
import { allowsPrivateTargets, checkEgressUrl } from "./egress-guard";

export const FETCH_TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 5;

export interface FetchedBody {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  /** Hex SHA-256 of the body. */
  sha256: string;
}

/** Reads at most `max` bytes of a stream; `truncated` says whether more was left (the rest is cancelled). */
export async function readCapped(stream: ReadableStream<Uint8Array> | null, max: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!stream) return { bytes: new Uint8Array(0), truncated: false };
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > max) {
      chunks.push(value.subarray(0, max - size));
      size = max;
      truncated = true;
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  if (truncated) await reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes, truncated };
}

export async function digestHex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);
const withoutCredentials = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())));

/**
 * Fetches `raw` with GET (or `init.method`), answering whatever status the target gave.
 * Throws 422 for a refused URL (field `field`), 502 `upstream_failed` for a network
 * error, a timeout, too many redirects, or a body over `maxBytes`.
 */
export async function fetchGuarded(
  env: Env,
  raw: string,
  init: { method?: string; headers?: Record<string, string>; maxBytes: number; field?: string },
): Promise<FetchedBody> {
  const allowPrivate = allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS);
  let url = checkEgressUrl(raw, allowPrivate, init.field ?? "url");
  const deadline = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  let headers: Record<string, string> = { "user-agent": `${env.SERVICE_NAME}-fetch/1.0`, ...init.headers };
  try {
    for (let hop = 0; ; hop++) {
      const res = await fetch(url, {
        method: init.method ?? "GET",
        redirect: "manual",
        signal: deadline,
        headers,
      });
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new AppError("upstream_failed", `${raw}: more than ${MAX_REDIRECTS} redirects.`);
        const next = checkEgressUrl(new URL(location, url).href, allowPrivate, init.field ?? "url");
        // As browsers do: credentials meant for one origin are not handed to another.
        if (next.origin !== url.origin) headers = withoutCredentials(headers);
        url = next;
        continue;
      }
      const { bytes, truncated } = await readCapped(res.body, init.maxBytes);
      if (truncated) throw new AppError("upstream_failed", `${url.href}: the response is larger than ${init.maxBytes} bytes.`);
      return { url: url.href, status: res.status, headers: Object.fromEntries(res.headers), body: bytes, sha256: await digestHex(bytes) };
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const timeout = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    throw new AppError("upstream_failed", `${url.href}: ${timeout ? `no complete answer within ${FETCH_TIMEOUT_MS / 1000} s` : err instanceof Error ? err.message : String(err)}.`);
  }
}

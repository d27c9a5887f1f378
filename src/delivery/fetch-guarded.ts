/**
 * A server-side fetch on a caller's behalf (a snapshot, an attested fetch, an
 * object's source_url): every hop through the egress guard, redirects followed
 * by hand so each target is checked, a timeout, and the body read up to a cap
 * (fetchGuarded) or handed back still streaming (fetchStreamGuarded).
 */
import type { Env } from "../env";
import { digestHex } from "../bytes";
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
export async function readCapped(
  stream: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
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

const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);
const withoutCredentials = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())));

interface FetchInit {
  method?: string;
  headers?: Record<string, string>;
  /** The input field the URL came from, named by a 422. */
  field?: string;
  /** A request body (a token exchange's form): sent once, so a redirect is answered as it is, not followed. */
  body?: string;
  /** The whole fetch, body included, within this long (default FETCH_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** 502 naming the hop that failed: a timeout says so, anything else passes its message on. */
function upstreamError(url: URL, err: unknown, timeoutMs = FETCH_TIMEOUT_MS): AppError {
  if (err instanceof AppError) return err;
  const timeout = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
  const why = timeout
    ? `no complete answer within ${timeoutMs / 1000} s`
    : err instanceof Error
      ? err.message
      : String(err);
  return new AppError("upstream_failed", `${url.href}: ${why}.`);
}

/**
 * The redirect walk both fetches share: every hop's URL through the egress guard (422 for a
 * refused one), credentials dropped across origins, at most MAX_REDIRECTS hops. Answers the
 * final response with its body unread; a network failure or `signal` firing is a 502.
 */
async function followGuarded(
  env: Env,
  raw: string,
  init: FetchInit,
  signal: AbortSignal,
): Promise<{ url: URL; res: Response }> {
  const allowPrivate = allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS);
  let url = checkEgressUrl(raw, allowPrivate, init.field ?? "url");
  // The caller's User-Agent, in whatever case it was written, replaces the default rather than joining it.
  const ownAgent = Object.keys(init.headers ?? {}).some((name) => name.toLowerCase() === "user-agent");
  let headers: Record<string, string> = {
    ...(ownAgent ? {} : { "user-agent": `${env.SERVICE_NAME}-fetch/1.0` }),
    ...init.headers,
  };
  try {
    for (let hop = 0; ; hop++) {
      const res = await fetch(url, {
        method: init.method ?? "GET",
        redirect: "manual",
        signal,
        headers,
        body: init.body,
      });
      const location = res.headers.get("location");
      if (!(res.status >= 300 && res.status < 400 && location) || init.body !== undefined) return { url, res };
      await res.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw new AppError("upstream_failed", `${raw}: more than ${MAX_REDIRECTS} redirects.`);
      const next = checkEgressUrl(new URL(location, url).href, allowPrivate, init.field ?? "url");
      // As browsers do: credentials meant for one origin are not handed to another.
      if (next.origin !== url.origin) headers = withoutCredentials(headers);
      url = next;
    }
  } catch (err) {
    throw upstreamError(url, err, init.timeoutMs);
  }
}

/**
 * Fetches `raw` with GET (or `init.method`), answering whatever status the target gave.
 * Throws 422 for a refused URL (field `field`), 413 for a body over `maxBytes`, and 502
 * `upstream_failed` for a network error, a timeout or too many redirects.
 */
export async function fetchGuarded(
  env: Env,
  raw: string,
  init: FetchInit & { maxBytes: number },
): Promise<FetchedBody> {
  const { url, res } = await followGuarded(env, raw, init, AbortSignal.timeout(init.timeoutMs ?? FETCH_TIMEOUT_MS));
  let read: { bytes: Uint8Array; truncated: boolean };
  try {
    read = await readCapped(res.body, init.maxBytes);
  } catch (err) {
    throw upstreamError(url, err, init.timeoutMs);
  }
  // The caller's own limit, not the upstream's failure: the same 413 a too-large request gets.
  if (read.truncated)
    throw new AppError(
      "payload_too_large",
      `${url.href}: the response is larger than ${init.maxBytes} bytes; nothing was kept.`,
    );
  return {
    url: url.href,
    status: res.status,
    headers: Object.fromEntries(res.headers),
    body: read.bytes,
    sha256: await digestHex(read.bytes),
  };
}

/** A streamed body may pause this long between chunks before the fetch is given up. */
export const STREAM_IDLE_MS = 30_000;

/**
 * The same guarded walk for a body too large to hold (an object's source_url): the final
 * response comes back with its body still streaming. The answer must start within
 * FETCH_TIMEOUT_MS; after that no overall deadline applies, but a body that stalls for
 * STREAM_IDLE_MS errors its stream, so whoever reads it fails instead of waiting forever.
 */
export async function fetchStreamGuarded(
  env: Env,
  raw: string,
  init: FetchInit,
): Promise<{ url: string; res: Response }> {
  const control = new AbortController();
  const giveUp = () => control.abort(new DOMException("The source stalled.", "TimeoutError"));
  let timer = setTimeout(giveUp, FETCH_TIMEOUT_MS);
  const { url, res } = await followGuarded(env, raw, init, control.signal).catch((err: unknown) => {
    clearTimeout(timer);
    throw err;
  });
  clearTimeout(timer);
  return { url: url.href, res: watched(res, giveUp) };
}

/** The response with a body that errors (through `giveUp`) once it stalls for STREAM_IDLE_MS. */
function watched(res: Response, giveUp: () => void): Response {
  if (!res.body) return res;
  let timer = setTimeout(giveUp, STREAM_IDLE_MS);
  const watchdog = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      clearTimeout(timer);
      timer = setTimeout(giveUp, STREAM_IDLE_MS);
      controller.enqueue(chunk);
    },
    flush() {
      clearTimeout(timer);
    },
  });
  return new Response(res.body.pipeThrough(watchdog), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

/**
 * One hop of a reverse proxy (a public face's `upstream` answer): the request, its body
 * streaming, to `raw` through the egress guard; the answer back as it came, a redirect included
 * (for the client to follow), still streaming, under the same start timeout and idle watchdog
 * as fetchStreamGuarded. A refused URL is 422, a network failure or timeout 502.
 */
export async function proxyGuarded(
  env: Env,
  raw: string,
  init: { method: string; headers: Record<string, string>; body: ReadableStream<Uint8Array> | null },
): Promise<Response> {
  const url = checkEgressUrl(raw, allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS));
  const control = new AbortController();
  const giveUp = () => control.abort(new DOMException("The upstream stalled.", "TimeoutError"));
  const timer = setTimeout(giveUp, FETCH_TIMEOUT_MS);
  try {
    return watched(
      await fetch(url, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        redirect: "manual",
        signal: control.signal,
      }),
      giveUp,
    );
  } catch (err) {
    throw upstreamError(url, err);
  } finally {
    clearTimeout(timer);
  }
}

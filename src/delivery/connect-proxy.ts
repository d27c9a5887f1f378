/**
 * An HTTP/1.1 request sent through the operator's forward proxy (EGRESS_PROXY_URL), so it leaves
 * from the proxy's fixed addresses (EGRESS_IPS) rather than Cloudflare's shared ones, as Fixie and
 * QuotaGuard do. A Worker's fetch cannot use a proxy, so this speaks the protocol over a TCP
 * socket (`cloudflare:sockets`): a CONNECT tunnel to the target (RFC 9110 §9.3.6), TLS inside it
 * for https targets, then one request with `Connection: close` and its answer read with its
 * framing (Content-Length, chunked, or to the close), up to a byte cap.
 *
 * The target is checked by the egress guard like every outbound URL; the proxy itself is the
 * operator's configuration, not input. A tunnel is used for http targets too, so both go out the
 * same way and the proxy never rewrites the request.
 */
import { fromBinaryString, utf8 } from "../bytes";
import type { Env } from "../env";
import { AppError } from "../http/errors";
import { allowsPrivateTargets, checkEgressUrl } from "./egress-guard";
import { heard, openSocket } from "./sockets";

export interface ProxyRequest {
  method: string;
  url: string;
  /** Caller headers: checked already (no CR/LF, no framing or proxy headers). */
  headers: Record<string, string>;
  body: Uint8Array | null;
  /** Bytes of answer body kept; a longer one is a 413. */
  maxBytes: number;
  timeoutMs: number;
}

export interface ProxyResponse {
  status: number;
  /** Lower-case names; repeated fields joined with ", " (set-cookie with "\n", as it cannot be joined). */
  headers: Record<string, string>;
  body: Uint8Array;
}

/** The operator's proxy, parsed once per call: `http://user:pass@host:port` (the password may be absent). */
export function egressProxy(env: Env): { hostname: string; port: number; authorization: string | null } | null {
  if (!env.EGRESS_PROXY_URL) return null;
  const url = new URL(env.EGRESS_PROXY_URL);
  if (url.protocol !== "http:")
    throw new Error("EGRESS_PROXY_URL must be an http:// proxy (TLS to the target runs inside its tunnel)");
  const user = decodeURIComponent(url.username);
  const authorization = user ? `Basic ${btoa(`${user}:${decodeURIComponent(url.password)}`)}` : null;
  return { hostname: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 80), authorization };
}

/** The fixed addresses the proxy sends from, as the operator publishes them. */
export const egressIps = (env: Env): string[] =>
  (env.EGRESS_IPS ?? "")
    .split(",")
    .map((ip) => ip.trim())
    .filter(Boolean);

const MAX_HEAD_BYTES = 64 * 1024;

/** Bytes read from a socket, with what was read past the last thing asked for kept for the next. */
class SocketReader {
  private buffer = new Uint8Array(0);
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  private async more(): Promise<boolean> {
    const { value, done } = await this.reader.read();
    if (done) return false;
    const joined = new Uint8Array(this.buffer.length + value.length);
    joined.set(this.buffer);
    joined.set(value, this.buffer.length);
    this.buffer = joined;
    return true;
  }

  private take(n: number): Uint8Array {
    const out = this.buffer.slice(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }

  /** Up to and including the first CRLF (or CRLFCRLF for a head), as Latin-1 text. */
  async until(end: "\r\n" | "\r\n\r\n", max: number): Promise<string> {
    for (;;) {
      const at = indexOf(this.buffer, end);
      if (at >= 0) return String.fromCharCode(...this.take(at + end.length));
      if (this.buffer.length > max)
        throw new AppError("upstream_failed", `The answer's head is longer than ${max} bytes.`);
      if (!(await this.more()))
        throw new AppError("upstream_failed", "The connection closed before the answer's head was complete.");
    }
  }

  async exactly(n: number): Promise<Uint8Array> {
    while (this.buffer.length < n) {
      if (!(await this.more()))
        throw new AppError("upstream_failed", "The connection closed before the answer's body was complete.");
    }
    return this.take(n);
  }

  /** Everything until the peer closes, or `max + 1` bytes (the caller's sign that there is more). */
  async toEnd(max: number): Promise<Uint8Array> {
    while (this.buffer.length <= max && (await this.more()));
    return this.take(Math.min(this.buffer.length, max + 1));
  }

  release(): void {
    this.reader.releaseLock();
  }
}

function indexOf(bytes: Uint8Array, text: string): number {
  const first = text.charCodeAt(0);
  outer: for (
    let i = bytes.indexOf(first);
    i >= 0 && i <= bytes.length - text.length;
    i = bytes.indexOf(first, i + 1)
  ) {
    for (let j = 1; j < text.length; j++) if (bytes[i + j] !== text.charCodeAt(j)) continue outer;
    return i;
  }
  return -1;
}

interface Head {
  status: number;
  headers: Record<string, string>;
}

/** A status line and header fields (RFC 9112 §4, §5); obsolete line folding is refused, as the RFC allows. */
function parseHead(text: string): Head {
  const lines = text.split("\r\n").slice(0, -2);
  const status = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0] ?? "");
  if (!status) throw new AppError("upstream_failed", "The answer is not HTTP/1.1.");
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0 || /^[ \t]/.test(line))
      throw new AppError("upstream_failed", "The answer has a malformed header field.");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}${name === "set-cookie" ? "\n" : ", "}${value}` : value;
  }
  return { status: Number(status[1]), headers };
}

const tooLarge = (max: number) =>
  new AppError("payload_too_large", `The answer's body is larger than ${max} bytes; nothing was kept.`);

/** The body as its framing says (RFC 9112 §6.3), refusing more than `max` bytes. */
async function readBody(reader: SocketReader, method: string, head: Head, max: number): Promise<Uint8Array> {
  if (method === "HEAD" || head.status === 204 || head.status === 304) return new Uint8Array(0);
  if (/(^|,)\s*chunked\s*$/i.test(head.headers["transfer-encoding"] ?? "")) {
    const parts: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const line = await reader.until("\r\n", 1024);
      const length = parseInt(line.split(";")[0]!.trim(), 16);
      if (!Number.isFinite(length) || length < 0)
        throw new AppError("upstream_failed", "The answer's chunked body is malformed.");
      if (length === 0) break;
      if (size + length > max) throw tooLarge(max);
      parts.push(await reader.exactly(length));
      size += length;
      await reader.exactly(2);
    }
    // Trailer fields, if any, end with an empty line; they are not kept.
    while ((await reader.until("\r\n", MAX_HEAD_BYTES)) !== "\r\n");
    return concat(parts, size);
  }
  const declared = head.headers["content-length"];
  if (declared !== undefined) {
    if (!/^\d{1,15}$/.test(declared))
      throw new AppError("upstream_failed", "The answer's Content-Length is malformed.");
    if (Number(declared) > max) throw tooLarge(max);
    return reader.exactly(Number(declared));
  }
  const rest = await reader.toEnd(max);
  if (rest.length > max) throw tooLarge(max);
  return rest;
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * The CONNECT's refusal as the caller should see it: the proxy's policy is a 403, its own failure a 503, the target's a
 * 502.
 */
function tunnelRefused(status: number, target: string): AppError {
  if (status === 403) return new AppError("forbidden", `The egress proxy does not allow ${target}.`);
  if (status === 407)
    return new AppError(
      "engine_unavailable",
      "The egress proxy refused this service's credentials: the operator's EGRESS_PROXY_URL is wrong.",
    );
  return new AppError("upstream_failed", `The egress proxy could not reach ${target} (it answered ${status}).`);
}

/**
 * Sends the request through the proxy and reads the whole answer. Throws 422 (the guard), 403
 * (the proxy's policy), 413 (the body cap), 502 (the target or the exchange failed, or timed
 * out) and 503 (no proxy configured, or it cannot be reached).
 */
export async function fetchThroughProxy(env: Env, request: ProxyRequest): Promise<ProxyResponse> {
  const proxy = egressProxy(env);
  if (!proxy)
    throw new AppError("engine_unavailable", "This service has no egress proxy configured (EGRESS_PROXY_URL).");
  const url = checkEgressUrl(request.url, allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS));
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const authority = `${url.hostname}:${port}`;
  let socket: Socket;
  try {
    socket = await openSocket(
      { hostname: proxy.hostname, port: proxy.port },
      { secureTransport: url.protocol === "https:" ? "starttls" : "off", allowHalfOpen: false },
    );
    await socket.opened;
  } catch (err) {
    throw new AppError(
      "engine_unavailable",
      `The egress proxy cannot be reached (${err instanceof Error ? err.message : String(err)}).`,
    );
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void socket.close().catch(() => undefined);
  }, request.timeoutMs);
  try {
    let writer = socket.writable.getWriter();
    let reader = new SocketReader(socket.readable.getReader());
    const auth = proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : "";
    await writer.write(utf8(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`));
    const tunnel = parseHead(await reader.until("\r\n\r\n", MAX_HEAD_BYTES));
    if (tunnel.status < 200 || tunnel.status > 299) throw tunnelRefused(tunnel.status, authority);
    if (url.protocol === "https:") {
      writer.releaseLock();
      reader.release();
      socket = heard(socket.startTls({ expectedServerHostname: url.hostname.replace(/^\[|\]$/g, "") }));
      writer = socket.writable.getWriter();
      reader = new SocketReader(socket.readable.getReader());
    }
    await writer.write(requestBytes(env, url, request));
    let head: Head;
    // Interim answers (100 Continue, 103 Early Hints) come before the real one (RFC 9110 §15.2).
    do head = parseHead(await reader.until("\r\n\r\n", MAX_HEAD_BYTES));
    while (head.status >= 100 && head.status < 200);
    const body = await readBody(reader, request.method, head, request.maxBytes);
    return { status: head.status, headers: head.headers, body };
  } catch (err) {
    if (timedOut)
      throw new AppError("upstream_failed", `${url.href}: no complete answer within ${request.timeoutMs / 1000} s.`);
    if (err instanceof AppError) throw err;
    throw new AppError("upstream_failed", `${url.href}: ${err instanceof Error ? err.message : String(err)}.`);
  } finally {
    clearTimeout(timer);
    void socket.close().catch(() => undefined);
  }
}

/** The request as it goes on the wire inside the tunnel: origin-form target, framing set here. */
function requestBytes(env: Env, url: URL, request: ProxyRequest): Uint8Array {
  const fields: [string, string][] = [
    ["Host", url.host],
    ["Connection", "close"],
  ];
  if (!Object.keys(request.headers).some((name) => name.toLowerCase() === "user-agent"))
    fields.push(["User-Agent", `${env.SERVICE_NAME}-egress/1.0`]);
  for (const [name, value] of Object.entries(request.headers)) fields.push([name, value]);
  if (request.body !== null || ["POST", "PUT", "PATCH"].includes(request.method))
    fields.push(["Content-Length", String(request.body?.length ?? 0)]);
  // Header values may hold obs-text (RFC 9110 §5.5): one byte per character, as they were given.
  const head = fromBinaryString(
    `${request.method} ${url.pathname}${url.search} HTTP/1.1\r\n` +
      `${fields.map(([n, v]) => `${n}: ${v}\r\n`).join("")}\r\n`,
  );
  return request.body ? concat([head, request.body], head.length + request.body.length) : head;
}

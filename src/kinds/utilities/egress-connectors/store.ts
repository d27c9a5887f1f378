/**
 * An egress connector's allowlist, its sealed headers, the request itself (prepare: through the
 * operator's proxy, nothing charged if it is refused or fails) and the log of requests (run).
 */
import { randomId } from "../../../auth/ids";
import { seal, unseal } from "../../../auth/sealing";
import { digestHex, fromBase64, toBase64, utf8, utf8OrNull } from "../../../bytes";
import { fetchThroughProxy } from "../../../delivery/connect-proxy";
import type { Env } from "../../../env";
import { AppError } from "../../../http/errors";
import type { EngineStore, PrepareContext } from "../../../kind/kind";
import { keysetPage, type Page } from "../../../kind/pages";
import { iso, isoOrNull } from "../../../time";
import {
  MAX_REQUEST_LOG,
  type ConnectorConfig,
  type FetchedView,
  type FetchInput,
  type RequestLogEntry,
} from "./schema";

export const TABLES = [
  "CREATE TABLE connector_headers (id INTEGER PRIMARY KEY CHECK (id = 1), sealed TEXT NOT NULL)",
  `CREATE TABLE requests (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, request_id TEXT NOT NULL, at INTEGER NOT NULL, method TEXT NOT NULL,
    url TEXT NOT NULL, status INTEGER NOT NULL, bytes_sent INTEGER NOT NULL, bytes_received INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL
  )`,
  "CREATE TABLE totals (id INTEGER PRIMARY KEY CHECK (id = 1), requests INTEGER NOT NULL, bytes_received " +
    "INTEGER NOT NULL, last_at INTEGER)",
];

/**
 * An allowed-host entry in its canonical spelling, as the URL parser spells a request's host (lower
 * case, IDNA, IPv4 in dotted decimal, no trailing dot), or a 422 naming it.
 */
export function hostPattern(entry: string, index: number): string {
  const refuse = (why: string) =>
    new AppError("validation_failed", `allowed_hosts[${index}]: ${why}`, {
      errors: [{ path: `allowed_hosts.${index}`, message: why }],
    });
  const wildcard = entry.startsWith("*.");
  let url: URL;
  try {
    url = new URL(`http://${wildcard ? entry.slice(2) : entry}/`);
  } catch {
    throw refuse("is not a host name or address");
  }
  if (url.pathname !== "/" || url.search || url.username)
    throw refuse("must be a host, optionally with :port, and nothing else");
  const host = url.hostname.replace(/\.+$/, "");
  if (!host) throw refuse("is not a host name or address");
  if (wildcard && (/^\[|^\d+\.\d+\.\d+\.\d+$/.test(host) || !host.includes(".")))
    throw refuse("a wildcard must stand before a domain of two labels or more, not an address or a top-level domain");
  // The URL parser drops a scheme's default port (80): an explicit one is kept, as written.
  const port = url.port || (/:80$/.test(entry) ? "80" : "");
  return `${wildcard ? "*." : ""}${host}${port ? `:${port}` : ""}`;
}

/**
 * Whether the target is on the list: an exact host, or a name below a wildcard's domain; a pattern's port must match
 * too.
 */
export function allowed(patterns: string[], target: URL): boolean {
  const host = target.hostname.replace(/\.+$/, "");
  const port = target.port || (target.protocol === "https:" ? "443" : "80");
  return patterns.some((pattern) => {
    const [, wildcard, name, wanted] = /^(\*\.)?(.+?)(?::(\d+))?$/.exec(pattern)!;
    if (wanted && wanted !== port) return false;
    return wildcard ? host.endsWith(`.${name}`) : host === name;
  });
}

export const sealHeaders = (env: Env, headers: Record<string, string>): string => seal(env, JSON.stringify(headers));

export function saveHeaders(store: EngineStore, sealed: string): void {
  store.sql.exec("INSERT INTO connector_headers (id, sealed) VALUES (1, ?)", sealed);
  store.sql.exec("INSERT INTO totals (id, requests, bytes_received, last_at) VALUES (1, 0, 0, NULL)");
}

function connectorHeaders(ctx: PrepareContext): Record<string, string> {
  const sealed = ctx.sql.exec<{ sealed: string }>("SELECT sealed FROM connector_headers").toArray()[0]?.sealed;
  return sealed ? (JSON.parse(unseal(ctx.env, sealed)) as Record<string, string>) : {};
}

/** A caller's header replaces the connector's of the same name, whatever its case. */
function merged(base: Record<string, string>, own: Record<string, string>): Record<string, string> {
  const overridden = new Set(Object.keys(own).map((n) => n.toLowerCase()));
  return { ...Object.fromEntries(Object.entries(base).filter(([n]) => !overridden.has(n.toLowerCase()))), ...own };
}

export interface Fetched {
  view: FetchedView;
  log: Omit<RequestLogEntry, "seq" | "request_id" | "at">;
}

/**
 * The request, through the proxy: 403 for a host not on the list, and the proxy client's errors (nothing charged for
 * any).
 */
export async function fetchVia(ctx: PrepareContext, config: ConnectorConfig, input: FetchInput): Promise<Fetched> {
  const target = new URL(input.url);
  if (!allowed(config.allowed_hosts, target)) {
    throw new AppError("forbidden", `${target.host} is not among this connector's allowed_hosts.`);
  }
  const body =
    input.body_base64 !== undefined
      ? fromBase64(input.body_base64)
      : input.body !== undefined
        ? utf8(input.body)
        : null;
  const started = Date.now();
  const answer = await fetchThroughProxy(ctx.env, {
    method: input.method,
    url: input.url,
    headers: merged(connectorHeaders(ctx), input.headers),
    body,
    maxBytes: config.max_response_bytes,
    timeoutMs: input.timeout_seconds * 1000,
  });
  ctx.stillHere();
  const duration = Date.now() - started;
  const text = utf8OrNull(answer.body);
  const logged = `${target.protocol}//${target.host}${target.pathname}`;
  return {
    view: {
      request_id: randomId("egr_"),
      url: input.url,
      method: input.method,
      status: answer.status,
      headers: answer.headers,
      body: text,
      body_base64: text === null ? toBase64(answer.body) : null,
      bytes: answer.body.length,
      sha256: await digestHex(answer.body),
      duration_ms: duration,
      egress_ips: config.egress_ips,
      at: iso(ctx.now),
    },
    log: {
      method: input.method,
      url: logged,
      status: answer.status,
      bytes_sent: body?.length ?? 0,
      bytes_received: answer.body.length,
      duration_ms: duration,
    },
  };
}

type Row = RequestLogEntry & { at: number };

/** Records the request (the newest MAX_REQUEST_LOG kept) and answers it. */
export function record(store: EngineStore, fetched: Fetched): FetchedView {
  const now = store.now;
  const { log, view } = fetched;
  store.sql.exec(
    "INSERT INTO requests (request_id, at, method, url, status, bytes_sent, bytes_received, duration_ms) " +
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    view.request_id,
    now,
    log.method,
    log.url,
    log.status,
    log.bytes_sent,
    log.bytes_received,
    log.duration_ms,
  );
  store.sql.exec("DELETE FROM requests WHERE seq <= (SELECT MAX(seq) FROM requests) - ?", MAX_REQUEST_LOG);
  store.sql.exec(
    "UPDATE totals SET requests = requests + 1, bytes_received = bytes_received + ?, last_at = ?",
    log.bytes_received,
    now,
  );
  return { ...view, at: iso(now) };
}

const entryOf = (r: Row): RequestLogEntry => ({ ...r, at: iso(r.at) });

export function requestsPage(sql: SqlStorage, limit: number, cursor: string | undefined): Page<RequestLogEntry> {
  const before = cursor === undefined ? Number.MAX_SAFE_INTEGER : Number(cursor);
  const rows = sql
    .exec<Row>("SELECT * FROM requests WHERE seq < ? ORDER BY seq DESC LIMIT ?", before, limit + 1)
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, entryOf);
}

export const allRequests = (sql: SqlStorage): RequestLogEntry[] =>
  sql.exec<Row>("SELECT * FROM requests ORDER BY seq DESC").toArray().map(entryOf);

export function usage(sql: SqlStorage) {
  const t = sql
    .exec<{ requests: number; bytes_received: number; last_at: number | null }>("SELECT * FROM totals")
    .one();
  return { requests: t.requests, bytes_received: t.bytes_received, last_request_at: isoOrNull(t.last_at) };
}

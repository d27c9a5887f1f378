/** The stand-in's in-memory account, and the shape of its routes (index.ts serves them). */
import { randomUUID } from "node:crypto";
import type { RecordedRequest } from "./index";

export interface D1Database {
  uuid: string;
  name: string;
  created_at: string;
  /** The rows of wrangler's d1_migrations table; null while the table does not exist. */
  migrations: string[] | null;
  /** Every SQL text the database was sent, in order. */
  queries: string[];
}

export interface Queue {
  queue_id: string;
  queue_name: string;
  created_on: string;
  modified_on: string;
  consumers: {
    consumer_id: string;
    script_name: string;
    settings: Record<string, unknown>;
    dead_letter_queue?: string;
    type: "worker";
  }[];
}

export interface Script {
  name: string;
  tag: string;
  created_on: string;
  modified_on: string;
  /** Secret values, kept so tests can check what was generated; never recorded in `requests`. */
  secrets: Map<string, string>;
  /** The bindings of the latest upload (names and types, text of plain vars). */
  bindings: { type: string; name: string; text?: string }[];
  /** The Durable Object migration tag the script is at. */
  migrationTag: string | null;
  versions: string[];
  deployed: string | null;
  crons: string[];
  /** Whether it answers on workers.dev, and on preview URLs. */
  workersDev: boolean;
  previews: boolean;
  /** A draft made by `wrangler secret put/bulk` on a missing Worker: no code of the project's yet. */
  draft: boolean;
}

export interface Account {
  id: string;
  subdomain: string;
  d1: Map<string, D1Database>;
  buckets: Map<string, { name: string; creation_date: string }>;
  queues: Map<string, Queue>;
  scripts: Map<string, Script>;
  /** Asset upload sessions: manifest hashes the next upload must bring. */
  assetHashes: Set<string>;
}

export function newAccount(id: string): Account {
  return {
    id,
    subdomain: "zeitvault-operator",
    d1: new Map(),
    buckets: new Map(),
    queues: new Map(),
    scripts: new Map(),
    assetHashes: new Set(),
  };
}

/**
 * An account that already has things, set straight into the state (what a test arranges, not what it
 * checks): a database (its id returned), a bucket, a queue, a deployed Worker with secrets.
 */
export function seeder(account: Account) {
  return {
    database(name: string, migrations: string[] | null = null) {
      const db: D1Database = { uuid: newId(), name, created_at: now(), migrations, queries: [] };
      account.d1.set(db.uuid, db);
      return db.uuid;
    },
    bucket: (name: string) => void account.buckets.set(name, { name, creation_date: now() }),
    queue: (name: string) =>
      void account.queues.set(name, {
        queue_id: hexId(),
        queue_name: name,
        created_on: now(),
        modified_on: now(),
        consumers: [],
      }),
    worker(name: string, secrets: Record<string, string>) {
      const id = newId();
      account.scripts.set(name, {
        name,
        tag: hexId(),
        created_on: now(),
        modified_on: now(),
        secrets: new Map(Object.entries(secrets)),
        bindings: [],
        migrationTag: "v1",
        versions: [id],
        deployed: id,
        crons: [],
        workersDev: true,
        previews: false,
        draft: false,
      });
    },
  };
}

export interface ApiError {
  code: number;
  message: string;
}

export interface Reply {
  status?: number;
  result?: unknown;
  resultInfo?: Record<string, unknown>;
  errors?: ApiError[];
  /** A body that is not the v4 envelope. */
  raw?: string;
}

export interface RouteContext {
  account: Account;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Buffer;
  contentType: string;
  /** The request's record: a handler fills in its summary and says whether it changed anything. */
  entry: RecordedRequest;
}

export interface Route {
  method: string;
  path: RegExp;
  handle(ctx: RouteContext): Reply | Promise<Reply>;
}

/** A route under /accounts/{account_id}: `:name` segments become named groups. */
export function route(method: string, pattern: string, handle: Route["handle"]): Route {
  const source = pattern.replace(/:([a-z_]+)/g, "(?<$1>[^/]+)");
  return { method, path: new RegExp(`^/accounts/(?<account_id>[^/]+)${source}$`), handle };
}

export const now = () => new Date().toISOString();
export const newId = () => randomUUID();
/** Cloudflare's ids without hyphens (queues, tags). */
export const hexId = () => randomUUID().replaceAll("-", "");

export const notFound = (code: number, message: string): Reply => ({ status: 404, errors: [{ code, message }] });

/** A JSON body's summary: its keys, with the values of `secretKeys` left out. */
export function summarizeJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(summarizeJson).join(", ")}]`;
  if (value && typeof value === "object") return `{${Object.keys(value).join(", ")}}`;
  return typeof value;
}

export function jsonBody<T>(body: Buffer): T {
  return JSON.parse(body.toString("utf8") || "null") as T;
}

/**
 * Feature requests and abuse reports in D1. Exported for every front door that
 * takes them (the HTTP routes here, the MCP `request_feature` tool), so they all
 * store the same thing: redacted text, a salted IP hash, never a credential.
 */
import { randomId } from "../auth/ids";
import { decodeCursor, encodeCursor } from "./cursor";
import { keysetPage, type Page } from "../kind/pages";
import { clientHash, redactCredentials, redactOptional } from "./privacy";
import type { AbuseReason, FeatureRequestInput } from "./schema";
import { iso } from "../time";

export interface SubmissionMeta {
  /** The client address (CF-Connecting-IP, IPv6 as its /64); hashed before anything is written. */
  ip: string | null;
  requestId: string;
  now: number;
}

export interface Receipt {
  id: string;
  created_at: string;
  status: "received";
}

export interface AbuseReportRecord {
  /** The reported URL, without any userinfo. */
  url: string;
  /** The public address it names, when it names one. */
  publicId: string | null;
  reason: AbuseReason;
  details?: string;
  contact?: string;
}

export async function recordFeatureRequest(
  db: D1Database,
  input: FeatureRequestInput,
  meta: SubmissionMeta,
): Promise<Receipt> {
  const id = randomId("fr_");
  const hash = await clientHash(db, meta.ip, meta.now);
  await db
    .prepare(
      "INSERT INTO feature_requests (id, title, body, contact, kind, client_hash, request_id, created_at) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(
      id,
      redactCredentials(input.title),
      redactOptional(input.body),
      redactOptional(input.contact),
      input.kind ?? null,
      hash,
      meta.requestId,
      meta.now,
    )
    .run();
  return { id, created_at: iso(meta.now), status: "received" };
}

export async function recordAbuseReport(
  db: D1Database,
  report: AbuseReportRecord,
  meta: SubmissionMeta,
): Promise<Receipt> {
  const id = randomId("ar_");
  const hash = await clientHash(db, meta.ip, meta.now);
  await db
    .prepare(
      "INSERT INTO abuse_reports (id, url, public_id, reason, details, contact, client_hash, request_id, " +
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(
      id,
      redactCredentials(report.url),
      report.publicId,
      report.reason,
      redactOptional(report.details),
      redactOptional(report.contact),
      hash,
      meta.requestId,
      meta.now,
    )
    .run();
  return { id, created_at: iso(meta.now), status: "received" };
}

interface FeatureRequestRow {
  id: string;
  title: string;
  body: string | null;
  contact: string | null;
  kind: string | null;
  client_hash: string | null;
  created_at: number;
}

interface AbuseReportRow {
  id: string;
  url: string;
  public_id: string | null;
  reason: AbuseReason;
  details: string | null;
  contact: string | null;
  client_hash: string | null;
  created_at: number;
  disabled: number;
}

/** Newest first; `cursor` is the `next_cursor` of the previous page. */
async function pageRows<T extends { id: string; created_at: number }, V>(
  db: D1Database,
  select: string,
  table: string,
  limit: number,
  cursor: string | undefined,
  view: (row: T) => V,
): Promise<Page<V>> {
  const after = cursor ? decodeCursor(cursor) : null;
  const where = after ? `WHERE (${table}.created_at, ${table}.id) < (?, ?)` : "";
  const order = `ORDER BY ${table}.created_at DESC, ${table}.id DESC LIMIT ?`;
  const stmt = db.prepare(`${select} ${where} ${order}`);
  const bound = after ? stmt.bind(after.createdAt, after.id, limit + 1) : stmt.bind(limit + 1);
  const { results } = await bound.all<T>();
  return keysetPage(results, limit, (r) => encodeCursor({ createdAt: r.created_at, id: r.id }), view);
}

export async function listFeatureRequests(db: D1Database, limit: number, cursor?: string) {
  return pageRows<FeatureRequestRow, unknown>(
    db,
    "SELECT id, title, body, contact, kind, client_hash, created_at FROM feature_requests",
    "feature_requests",
    limit,
    cursor,
    (r) => ({ ...r, created_at: iso(r.created_at), status: "received" as const }),
  );
}

export async function listAbuseReports(db: D1Database, limit: number, cursor?: string) {
  return pageRows<AbuseReportRow, unknown>(
    db,
    `SELECT abuse_reports.id, url, abuse_reports.public_id, abuse_reports.reason, details, contact, client_hash,
       created_at, disabled_public_addresses.public_id IS NOT NULL AS disabled
     FROM abuse_reports LEFT JOIN disabled_public_addresses
       ON disabled_public_addresses.public_id = abuse_reports.public_id`,
    "abuse_reports",
    limit,
    cursor,
    ({ disabled, ...r }) => ({
      ...r,
      created_at: iso(r.created_at),
      status: "received" as const,
      public_address_disabled: disabled === 1,
    }),
  );
}

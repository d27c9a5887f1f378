/**
 * The resource's outbound events and their attempt log. Emitting writes the
 * delivery row and puts a self-contained message on the DELIVERIES queue; the
 * consumer reports every attempt back here. The log is the resource's data:
 * exported with it, deleted with it.
 */
import type { Env } from "../../src/env";
import { keysetPage } from "../../src/resources/pages";
import { AppError } from "../../src/http/errors";
import { envelope } from "../../src/delivery/events";
import type { WebhookMessage } from "../../src/delivery/messages";
import type { AttemptResult } from "../../src/delivery/attempt";
import type { Json } from "../../src/json";
import type { OutgoingRequest } from "../../src/resources/kind";
import { iso } from "../../src/time";
import { seal } from "../../src/auth/sealing";

/** Cloudflare Queues take messages up to 128 KB; the envelope's own fields need a little of that. */
const MAX_MESSAGE_BYTES = 120 * 1024;

export const DELIVERY_TABLES = [
  `CREATE TABLE deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id TEXT NOT NULL UNIQUE,
    event_type TEXT NOT NULL,
    url TEXT NOT NULL,
    method TEXT NOT NULL,
    headers TEXT NOT NULL,
    body TEXT,
    -- 1: the body is sealed (auth/sealing.ts), a secret the log must not show.
    sealed INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  )`,
  `CREATE TABLE delivery_attempts (
    delivery_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    at INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    status_code INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL,
    response_excerpt TEXT,
    PRIMARY KEY (delivery_id, number)
  )`,
];

export interface DeliveryReport {
  deliveryId: string;
  /** The attempt just made; null when the dead-letter queue reports the end. */
  attempt: (AttemptResult & { number: number; at: number }) | null;
  /** Set when no more attempts follow. */
  final: "delivered" | "aborted" | "dead" | null;
}

type DeliveryRow = {
  seq: number;
  delivery_id: string;
  event_type: string;
  url: string;
  method: string;
  headers: string;
  body: string | null;
  sealed: number;
  status: string;
  attempts: number;
  created_at: number;
  updated_at: number;
};

type AttemptRow = {
  number: number;
  at: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
};


export class DeliveryLog {
  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
    private readonly resourceId: string,
  ) {}

  /** Sends a lifecycle event to `url` (notify_url), signed with the sealed secret. */
  async emit(target: { url: string; sealedSecret: string }, type: string, data: Record<string, unknown>, uniqueBy: string): Promise<string> {
    const event = envelope(type, this.resourceId, data, uniqueBy);
    const request = { url: target.url, method: "POST" as const, headers: { "content-type": "application/json" }, body: JSON.stringify(event), eventType: type };
    await this.send(event.id, request, target.sealedSecret);
    return event.id;
  }

  /** Logs and queues one outbound request under `deliveryId` (the Standard Webhooks `webhook-id`); a known id is sent once. */
  async send(deliveryId: string, request: OutgoingRequest, sealedSecret: string): Promise<void> {
    const now = Date.now();
    const kept = request.sensitive && request.body !== null ? await seal(this.env, request.body) : request.body;
    const inserted = this.sql.exec(
      "INSERT INTO deliveries (delivery_id, event_type, url, method, headers, body, sealed, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (delivery_id) DO NOTHING",
      deliveryId, request.eventType, request.url, request.method, JSON.stringify(request.headers), kept, request.sensitive ? 1 : 0, now, now,
    ).rowsWritten;
    if (inserted) await this.enqueue(this.message(deliveryId, { ...request, body: kept }, request.sensitive === true, sealedSecret));
  }

  record(report: DeliveryReport): void {
    const row = this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE delivery_id = ?", report.deliveryId).toArray()[0];
    if (!row) return;
    const a = report.attempt;
    // Numbered here, not by the queue: a manual retry starts a new queue message, and the log keeps every attempt.
    const number = row.attempts + 1;
    if (a) {
      this.sql.exec(
        "INSERT INTO delivery_attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        report.deliveryId, number, a.at, a.outcome, a.statusCode, a.error, a.durationMs, a.responseExcerpt,
      );
    }
    const status = report.final ?? "retrying";
    this.sql.exec("UPDATE deliveries SET status = ?, attempts = ?, updated_at = ? WHERE delivery_id = ?", status, a ? number : row.attempts, Date.now(), report.deliveryId);
  }

  /** Sends a delivery again, now (after its retries ran out, or to replay it). */
  async retry(deliveryId: string, sealedSecret: string): Promise<Json> {
    const row = this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE delivery_id = ?", deliveryId).toArray()[0];
    if (!row) throw new AppError("not_found", `No delivery ${deliveryId} on this resource.`);
    // A delivery still on its schedule would then run twice at once.
    if (row.status === "pending" || row.status === "retrying") throw new AppError("conflict", `Delivery ${deliveryId} is still being attempted (${row.status}).`);
    this.sql.exec("UPDATE deliveries SET status = 'pending', updated_at = ? WHERE delivery_id = ?", Date.now(), deliveryId);
    const request = { url: row.url, method: row.method as OutgoingRequest["method"], headers: JSON.parse(row.headers) as Record<string, string>, body: row.body, eventType: row.event_type };
    await this.enqueue(this.message(deliveryId, request, row.sealed === 1, sealedSecret));
    return this.view({ ...row, status: "pending" });
  }

  /** Oldest first; the cursor is the last row's sequence number. */
  list(limit: number, cursor: string | null): { items: Json[]; next_cursor: string | null } {
    const rows = this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE seq > ? ORDER BY seq LIMIT ?", Number(cursor ?? 0) || 0, limit + 1).toArray();
    return keysetPage(rows, limit, (r) => r.seq, (r) => this.view(r));
  }

  private view(row: DeliveryRow): Json {
    const attempts = this.sql
      .exec<AttemptRow>("SELECT number, at, outcome, status_code, error, duration_ms, response_excerpt FROM delivery_attempts WHERE delivery_id = ? ORDER BY number", row.delivery_id)
      .toArray()
      .map((a) => ({ ...a, at: iso(a.at) }));
    return {
      id: row.delivery_id, event_type: row.event_type, url: row.url, method: row.method, status: row.status, attempts: row.attempts,
      created_at: iso(row.created_at), updated_at: iso(row.updated_at), body: row.sealed ? null : row.body, body_withheld: row.sealed === 1, attempt_log: attempts,
    };
  }

  /** A secret body travels sealed too: the queue and its dead-letter queue never hold it in clear. */
  private message(deliveryId: string, request: OutgoingRequest, bodySealed: boolean, sealedSecret: string): WebhookMessage {
    const { url, method, headers, body } = request;
    return { type: "webhook", resourceId: this.resourceId, deliveryId, url, method, headers, body, bodySealed, sealedSecret };
  }

  /** Throws when the message cannot be queued (too large, or the queue refused it); the caller records it as dead. */
  private async enqueue(message: WebhookMessage): Promise<void> {
    const size = new TextEncoder().encode(JSON.stringify(message)).length;
    if (size > MAX_MESSAGE_BYTES) throw new Error(`the request is ${size} bytes with its headers; a queued delivery carries at most ${MAX_MESSAGE_BYTES}`);
    await this.env.DELIVERIES.send(message, { contentType: "json" });
  }
}

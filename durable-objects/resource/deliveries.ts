/**
 * The resource's outbound events and their attempt log. Emitting writes the
 * delivery row and puts a self-contained message on the DELIVERIES queue; the
 * consumer reports every attempt back here. The log is the resource's data:
 * exported with it, deleted with it.
 */
import type { Env } from "../../src/env";
import { AppError } from "../../src/http/errors";
import { envelope } from "../../src/delivery/events";
import type { WebhookMessage } from "../../src/delivery/messages";
import type { AttemptResult } from "../../src/delivery/attempt";
import type { Json } from "../../src/json";

export const DELIVERY_TABLES = [
  `CREATE TABLE deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id TEXT NOT NULL UNIQUE,
    event_type TEXT NOT NULL,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
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
  body: string;
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

const iso = (ms: number) => new Date(ms).toISOString();

export class DeliveryLog {
  constructor(
    private readonly sql: SqlStorage,
    private readonly env: Env,
    private readonly resourceId: string,
  ) {}

  /** Sends an event to `url`, signed with the sealed secret. */
  async emit(target: { url: string; sealedSecret: string }, type: string, data: Record<string, unknown>): Promise<string> {
    const event = envelope(type, this.resourceId, data);
    const body = JSON.stringify(event);
    const now = Date.now();
    this.sql.exec(
      "INSERT INTO deliveries (delivery_id, event_type, url, body, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', ?, ?)",
      event.id, type, target.url, body, now, now,
    );
    await this.enqueue({ type: "webhook", resourceId: this.resourceId, deliveryId: event.id, url: target.url, body, sealedSecret: target.sealedSecret });
    return event.id;
  }

  record(report: DeliveryReport): void {
    const row = this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE delivery_id = ?", report.deliveryId).toArray()[0];
    if (!row) return;
    const a = report.attempt;
    if (a) {
      this.sql.exec(
        "INSERT OR REPLACE INTO delivery_attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        report.deliveryId, a.number, a.at, a.outcome, a.statusCode, a.error, a.durationMs, a.responseExcerpt,
      );
    }
    const status = report.final ?? "retrying";
    this.sql.exec("UPDATE deliveries SET status = ?, attempts = max(attempts, ?), updated_at = ? WHERE delivery_id = ?", status, a?.number ?? 0, Date.now(), report.deliveryId);
  }

  /** Sends a delivery again, now (after its retries ran out, or to replay it). */
  async retry(deliveryId: string, sealedSecret: string): Promise<Json> {
    const row = this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE delivery_id = ?", deliveryId).toArray()[0];
    if (!row) throw new AppError("not_found", `No delivery ${deliveryId} on this resource.`);
    this.sql.exec("UPDATE deliveries SET status = 'pending', updated_at = ? WHERE delivery_id = ?", Date.now(), deliveryId);
    await this.enqueue({ type: "webhook", resourceId: this.resourceId, deliveryId, url: row.url, body: row.body, sealedSecret });
    return this.view({ ...row, status: "pending" });
  }

  /** Oldest first; the cursor is the last row's sequence number. */
  list(limit: number, cursor: string | null): { items: Json[]; next_cursor: string | null } {
    const rows = this.sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE seq > ? ORDER BY seq LIMIT ?", Number(cursor ?? 0) || 0, limit + 1).toArray();
    const page = rows.slice(0, limit);
    return { items: page.map((r) => this.view(r)), next_cursor: rows.length > limit ? String(page[page.length - 1]!.seq) : null };
  }

  private view(row: DeliveryRow): Json {
    const attempts = this.sql
      .exec<AttemptRow>("SELECT number, at, outcome, status_code, error, duration_ms, response_excerpt FROM delivery_attempts WHERE delivery_id = ? ORDER BY number", row.delivery_id)
      .toArray()
      .map((a) => ({ ...a, at: iso(a.at) }));
    return {
      id: row.delivery_id, event_type: row.event_type, url: row.url, status: row.status, attempts: row.attempts,
      created_at: iso(row.created_at), updated_at: iso(row.updated_at), event: JSON.parse(row.body) as Json, attempt_log: attempts,
    };
  }

  private async enqueue(message: WebhookMessage): Promise<void> {
    await this.env.DELIVERIES.send(message, { contentType: "json" });
  }
}

/**
 * The deliveries log's tables (deliveries.ts), as the platform's migrations made them: the first
 * layout, then the outbox columns. Each list only grows (resource/migrations.ts).
 */
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

/** Platform migration 2: the outbox (sends, refusals, due_at), stored bodies and retention (settled_at). */
export const DELIVERY_OUTBOX_COLUMNS = [
  "ALTER TABLE deliveries ADD COLUMN body_key TEXT",
  // How many times the row went on the queue; the message carries its number.
  "ALTER TABLE deliveries ADD COLUMN sends INTEGER NOT NULL DEFAULT 0",
  // Refusals by the queue since the last send that went through.
  "ALTER TABLE deliveries ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0",
  // 1 while the queue has the row (due_at is then real time), 0 while it waits to go there.
  "ALTER TABLE deliveries ADD COLUMN queued INTEGER NOT NULL DEFAULT 0",
  "ALTER TABLE deliveries ADD COLUMN due_at INTEGER",
  "ALTER TABLE deliveries ADD COLUMN settled_at INTEGER",
  // Rows older code queued went on the queue once; should nothing be heard of them for a day, they go again.
  "UPDATE deliveries SET sends = 1, queued = 1, due_at = updated_at + 86400000 WHERE status IN ('pending', 'retrying')",
  "UPDATE deliveries SET settled_at = updated_at WHERE status IN ('delivered', 'aborted', 'dead')",
  "CREATE INDEX deliveries_due ON deliveries (due_at) WHERE due_at IS NOT NULL",
  "CREATE INDEX deliveries_body ON deliveries (body_key) WHERE body_key IS NOT NULL",
];

/** Platform migration 4: a delivery may carry its own retry schedule (the deliveries kind). */
export const DELIVERY_RETRY_COLUMN = "ALTER TABLE deliveries ADD COLUMN retry_delays TEXT";

/**
 * Platform migration 6: which process put the row on the queue (a per-isolate id), so where the queue is
 * held in memory a restarted process sends again what the dead one had queued (outbox-policy.ts).
 */
export const DELIVERY_QUEUED_BY_COLUMN = "ALTER TABLE deliveries ADD COLUMN queued_by TEXT";

export type DeliveryRow = {
  seq: number;
  delivery_id: string;
  event_type: string;
  url: string;
  method: string;
  headers: string;
  body: string | null;
  body_key: string | null;
  /** 0 plain; 1 the body is sealed; 2 the whole request is (its url column is the redacted one). */
  sealed: number;
  status: string;
  attempts: number;
  sends: number;
  refusals: number;
  queued: number;
  due_at: number | null;
  created_at: number;
  updated_at: number;
  settled_at: number | null;
  retry_delays: string | null;
  queued_by: string | null;
};

export type AttemptRow = {
  number: number;
  at: number;
  outcome: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
};

export function readDelivery(sql: SqlStorage, id: string): DeliveryRow | undefined {
  return sql.exec<DeliveryRow>("SELECT * FROM deliveries WHERE delivery_id = ?", id).toArray()[0];
}

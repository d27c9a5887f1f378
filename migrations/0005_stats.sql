-- What the operator watches (GET /v1/admin/stats, the /admin page): src/operator/. Days are UTC
-- (YYYY-MM-DD), times Unix milliseconds. Nothing here names a caller: kinds, counts and ids only.

-- Requests per UTC day and kind, added to by each isolate's in-memory counts in batched upserts
-- (usage-counters.ts), never a write per request. kind is '' for requests about no kind.
-- refused: answered 4xx; errors: answered 5xx; charged_micro: the price of calls answered 2xx.
-- Public-address traffic (free) is counted apart: public_requests, public_errors (5xx).
CREATE TABLE usage_daily (
  day             TEXT NOT NULL,
  kind            TEXT NOT NULL,
  calls           INTEGER NOT NULL DEFAULT 0,
  refused         INTEGER NOT NULL DEFAULT 0,
  errors          INTEGER NOT NULL DEFAULT 0,
  charged_micro   INTEGER NOT NULL DEFAULT 0,
  public_requests INTEGER NOT NULL DEFAULT 0,
  public_errors   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (day, kind)
);

-- Deliveries attempted and waiting for a retry, written by the queue consumer: a row appears when
-- an attempt fails and is retried, and goes when the delivery settles or dies (delivery-stats.ts).
CREATE TABLE deliveries_open (
  delivery_id TEXT PRIMARY KEY,
  resource_id TEXT NOT NULL,
  first_at    INTEGER NOT NULL,
  last_at     INTEGER NOT NULL,
  attempts    INTEGER NOT NULL
);
CREATE INDEX deliveries_open_last ON deliveries_open (last_at);

-- Deliveries that died (dead-letter queue, or their own retry schedule spent) and have not got
-- through since; `at` is the latest death.
CREATE TABLE deliveries_dead (
  delivery_id TEXT PRIMARY KEY,
  resource_id TEXT NOT NULL,
  at          INTEGER NOT NULL
);
CREATE INDEX deliveries_dead_at ON deliveries_dead (at);

-- Revenue by day reads settled payments by time; active resources are counted by kind.
CREATE INDEX payments_settled_created ON payments (created_at) WHERE status = 'settled';
CREATE INDEX resources_active_kind ON resources (kind, expires_at) WHERE state = 'active';

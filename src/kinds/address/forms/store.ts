/**
 * What a form keeps: its submissions (in arrival order), the counts of what it turned away, and
 * per client address the submissions of the current clock hour (the rate limit). A submission is
 * recorded with its relays (the signed webhook event, the notify resource's message) in one
 * transaction, so it is relayed exactly when it is kept.
 */
import { randomId } from "../../../auth/ids";
import { AppError } from "../../../http/errors";
import { addressBucket } from "../../../http/client-ip";
import type { EngineStore } from "../../../kind/kind";
import { keysetPage } from "../../../kind/pages";
import { sendEvent } from "../../../delivery/events";
import { iso } from "../../../time";
import { notifyPeople } from "../notify/people";
import { MAX_SUBMISSIONS, type FormsConfig } from "./schema";
import type { Value } from "./submission";

export const TABLES = [
  `CREATE TABLE form_submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    submission_id TEXT NOT NULL UNIQUE,
    received_at INTEGER NOT NULL,
    data TEXT NOT NULL,
    client_ip TEXT,
    user_agent TEXT
  )`,
  "CREATE TABLE form_stats (id INTEGER PRIMARY KEY CHECK (id = 1), spam INTEGER NOT NULL DEFAULT 0, " +
    "rate_limited INTEGER NOT NULL DEFAULT 0)",
  "INSERT INTO form_stats (id) VALUES (1)",
  // The current hour's count per client address; older hours are swept as new ones start.
  "CREATE TABLE form_rate (client TEXT PRIMARY KEY, hour INTEGER NOT NULL, count INTEGER NOT NULL)",
];

type Row = {
  seq: number;
  submission_id: string;
  received_at: number;
  data: string;
  client_ip: string | null;
  user_agent: string | null;
};

const view = (r: Row) => ({
  submission_id: r.submission_id,
  seq: r.seq,
  received_at: iso(r.received_at),
  data: JSON.parse(r.data) as Record<string, Value>,
  client_ip: r.client_ip,
  user_agent: r.user_agent,
});

export function countSpam(sql: SqlStorage): void {
  sql.exec("UPDATE form_stats SET spam = spam + 1");
}

/**
 * Submissions that came without a client address (Cloudflare's edge, and wrangler dev, always set CF-Connecting-IP, so
 * only a request that did not come through either lacks it) cannot be told apart: they share one bucket per form,
 * which takes a quarter of one address's hourly share, so nobody gets a larger share by hiding the address
 * (docs/operations.md#rate-limits). The key cannot be an address: those have dots or colons.
 */
const ADDRESSLESS = "no-address";
export const addresslessLimit = (config: FormsConfig): number =>
  Math.max(1, Math.floor(config.max_per_ip_per_hour / 4));

/**
 * Takes one submission from `client` this hour (counted by its address's unit: an IPv6 address by its /64, as the
 * service's own limits count it, so one network cannot rotate through its 2^64 addresses); once it has had its hour's
 * share, counts the refusal and answers the seconds until the next hour (the caller answers 429, committing the count).
 */
export function takeRate(store: EngineStore, config: FormsConfig, client: string | null): number | null {
  const hour = Math.floor(store.now / 3_600_000);
  const bucket = addressBucket(client);
  const key = bucket ?? ADDRESSLESS;
  store.sql.exec("DELETE FROM form_rate WHERE hour < ?", hour);
  const used =
    store.sql.exec<{ count: number }>("SELECT count FROM form_rate WHERE client = ?", key).toArray()[0]?.count ?? 0;
  if (used >= (bucket ? config.max_per_ip_per_hour : addresslessLimit(config))) {
    store.sql.exec("UPDATE form_stats SET rate_limited = rate_limited + 1");
    return Math.ceil(((hour + 1) * 3_600_000 - store.now) / 1000);
  }
  store.sql.exec(
    "INSERT INTO form_rate (client, hour, count) VALUES (?, ?, 1) ON CONFLICT (client) DO UPDATE SET count = count + 1",
    key,
    hour,
  );
  return null;
}

/** Keeps a submission and relays it (webhook, notify), in the caller's transaction. */
export function keep(
  store: EngineStore,
  config: FormsConfig,
  data: Record<string, Value>,
  meta: { clientIp: string | null; userAgent: string | null },
) {
  if (submissionCount(store.sql) >= MAX_SUBMISSIONS) {
    throw new AppError(
      "storage_full",
      `This form keeps at most ${MAX_SUBMISSIONS} submissions: the owner must delete some first.`,
    );
  }
  const id = randomId("sub_");
  const shown = view(
    store.sql
      .exec<Row>(
        "INSERT INTO form_submissions (submission_id, received_at, data, client_ip, user_agent) VALUES (?, " +
          "?, ?, ?, ?) RETURNING *",
        id,
        store.now,
        JSON.stringify(data),
        meta.clientIp,
        meta.userAgent?.slice(0, 300) ?? null,
      )
      .one(),
  );
  if (config.webhook_url) sendEvent(store, { url: config.webhook_url }, "forms.submission", shown, `submission:${id}`);
  if (config.notify) {
    const labels = new Map(config.fields.map((f) => [f.name, f.label]));
    const lines = Object.entries(data).map(
      ([k, v]) => `${labels.get(k) ?? k}: ${v === null ? "—" : v === true ? "yes" : v === false ? "no" : v}`,
    );
    notifyPeople(
      store,
      config.notify,
      {
        title: `New submission: ${config.title}`.slice(0, 250),
        body: lines.join("\n").slice(0, 16_000),
        format: "text",
        priority: "normal",
        tags: ["form"],
      },
      `submission:${id}`,
    );
  }
  return shown;
}

export function submissionCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM form_submissions").one().n;
}

export function stats(sql: SqlStorage) {
  const s = sql.exec<{ spam: number; rate_limited: number }>("SELECT spam, rate_limited FROM form_stats").one();
  return { submissions: submissionCount(sql), spam: s.spam, rate_limited: s.rate_limited };
}

/** Newest first; the cursor is the last row's sequence number. */
export function submissionsPage(sql: SqlStorage, limit: number, cursor: string | undefined) {
  const rows = sql
    .exec<Row>(
      "SELECT * FROM form_submissions WHERE seq < ? ORDER BY seq DESC LIMIT ?",
      cursor ? Number(cursor) : Number.MAX_SAFE_INTEGER,
      limit + 1,
    )
    .toArray();
  return keysetPage(rows, limit, (r) => r.seq, view);
}

export function getSubmission(sql: SqlStorage, id: string) {
  const row = sql.exec<Row>("SELECT * FROM form_submissions WHERE submission_id = ?", id).toArray()[0];
  if (!row) throw new AppError("not_found", `No submission ${id} on this form.`);
  return view(row);
}

export function deleteSubmission(sql: SqlStorage, id: string) {
  const shown = getSubmission(sql, id);
  sql.exec("DELETE FROM form_submissions WHERE submission_id = ?", id);
  return shown;
}

export const allSubmissions = (sql: SqlStorage) =>
  sql.exec<Row>("SELECT * FROM form_submissions ORDER BY seq").toArray().map(view);

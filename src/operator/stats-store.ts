/**
 * The operator's figures, read from the service's own tables in one D1 batch: settled x402
 * payments (revenue), the daily rollup (calls, refusals, errors, charges), the resource index
 * (active resources) and the consumer's delivery tables (pending, dead).
 */
import { microToUsd } from "../money/amounts";
import { PENDING_WINDOW_MS } from "./delivery-stats";
import type { StatsAnswer } from "./stats-schema";
import { utcDay } from "./usage-counters";

const DAY_MS = 86_400_000;

interface UsageRow {
  calls: number;
  refused: number;
  errors: number;
  charged_micro: number;
  public_requests: number;
  public_errors: number;
}

const USAGE_SUMS =
  "SUM(calls) AS calls, SUM(refused) AS refused, SUM(errors) AS errors, SUM(charged_micro) AS " +
  "charged_micro, SUM(public_requests) AS public_requests, SUM(public_errors) AS public_errors";
const DAY_OF = (column: string) => `strftime('%Y-%m-%d', ${column} / 1000, 'unixepoch')`;

const NO_USAGE: UsageRow = { calls: 0, refused: 0, errors: 0, charged_micro: 0, public_requests: 0, public_errors: 0 };

function usageView(row: UsageRow = NO_USAGE) {
  return {
    calls: row.calls,
    refused: row.refused,
    errors: row.errors,
    charged_usd: microToUsd(row.charged_micro),
    public_requests: row.public_requests,
    public_errors: row.public_errors,
  };
}

function addUsage(into: UsageRow, row: UsageRow): void {
  into.calls += row.calls;
  into.refused += row.refused;
  into.errors += row.errors;
  into.charged_micro += row.charged_micro;
  into.public_requests += row.public_requests;
  into.public_errors += row.public_errors;
}

export async function readStats(db: D1Database, now: number, days: number, flushSeconds: number): Promise<StatsAnswer> {
  const firstDayMs = Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
  const from = utcDay(firstDayMs);
  const [revenue, usageByDay, usageByKind, active, pending, dead] = await db.batch<Record<string, unknown>>([
    db
      .prepare(
        `SELECT ${DAY_OF("created_at")} AS day, SUM(amount_micro) AS micro, COUNT(*) AS n FROM payments ` +
          `WHERE status = 'settled' AND created_at >= ? GROUP BY day`,
      )
      .bind(firstDayMs),
    db.prepare(`SELECT day, ${USAGE_SUMS} FROM usage_daily WHERE day >= ? GROUP BY day`).bind(from),
    db.prepare(`SELECT kind, ${USAGE_SUMS} FROM usage_daily WHERE day >= ? GROUP BY kind`).bind(from),
    db
      .prepare("SELECT kind, COUNT(*) AS n FROM resources WHERE state = 'active' AND expires_at > ? GROUP BY kind")
      .bind(now),
    db.prepare("SELECT COUNT(*) AS n FROM deliveries_open WHERE last_at >= ?").bind(now - PENDING_WINDOW_MS),
    db
      .prepare(`SELECT ${DAY_OF("at")} AS day, COUNT(*) AS n FROM deliveries_dead WHERE at >= ? GROUP BY day`)
      .bind(firstDayMs),
  ]);
  const rows = <T>(result: D1Result<Record<string, unknown>> | undefined) => (result?.results ?? []) as T[];
  const revenueOf = new Map(rows<{ day: string; micro: number; n: number }>(revenue).map((r) => [r.day, r]));
  const usageOf = new Map(rows<UsageRow & { day: string }>(usageByDay).map((r) => [r.day, r]));
  const deadOf = new Map(rows<{ day: string; n: number }>(dead).map((r) => [r.day, r.n]));

  const byDay = Array.from({ length: days }, (_, i) => {
    const day = utcDay(firstDayMs + i * DAY_MS);
    const paid = revenueOf.get(day);
    return {
      day,
      revenue_usd: microToUsd(paid?.micro ?? 0),
      payments: paid?.n ?? 0,
      ...usageView(usageOf.get(day)),
      deliveries_dead: deadOf.get(day) ?? 0,
    };
  });

  const kinds = new Map<string, { usage: UsageRow; active: number }>();
  const kindOf = (kind: string) => kinds.get(kind) ?? kinds.set(kind, { usage: { ...NO_USAGE }, active: 0 }).get(kind)!;
  for (const r of rows<UsageRow & { kind: string }>(usageByKind)) addUsage(kindOf(r.kind).usage, r);
  for (const r of rows<{ kind: string; n: number }>(active)) kindOf(r.kind).active = r.n;
  const byKind = [...kinds]
    .map(([kind, k]) => ({ kind: kind === "" ? null : kind, ...usageView(k.usage), active_resources: k.active }))
    .sort(
      (a, b) =>
        b.calls - a.calls || b.active_resources - a.active_resources || (a.kind ?? "").localeCompare(b.kind ?? ""),
    );

  const total = { ...NO_USAGE };
  for (const k of kinds.values()) addUsage(total, k.usage);
  const revenueMicro = [...revenueOf.values()].reduce((sum, r) => sum + r.micro, 0);
  return {
    from,
    to: utcDay(now),
    generated_at: new Date(now).toISOString(),
    flush_seconds: flushSeconds,
    totals: {
      revenue_usd: microToUsd(revenueMicro),
      payments: [...revenueOf.values()].reduce((sum, r) => sum + r.n, 0),
      ...usageView(total),
      active_resources: [...kinds.values()].reduce((sum, k) => sum + k.active, 0),
    },
    by_day: byDay,
    by_kind: byKind,
    deliveries: {
      pending: rows<{ n: number }>(pending)[0]?.n ?? 0,
      dead: [...deadOf.values()].reduce((sum, n) => sum + n, 0),
    },
  };
}

/** Shapes of GET /v1/admin/stats: the same schemas validate the query, type the answer and document both. */
import { z } from "@hono/zod-openapi";

/** x402 payments are swept a month past their authorization (kind/index-table.ts): revenue reaches no further back. */
export const MAX_STATS_DAYS = 30;

export const statsQuery = z.object({
  days: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_STATS_DAYS)
    .default(MAX_STATS_DAYS)
    .openapi({ example: 7 })
    .describe(
      `UTC days covered, today included (1–${MAX_STATS_DAYS}, default ${MAX_STATS_DAYS}): x402 payments ` +
        `are kept for 30 days, so revenue goes no further back.`,
    ),
});

const count = (what: string) => z.int().nonnegative().describe(what);
const usd = (what: string) => z.number().nonnegative().describe(`${what} In US dollars (at most 6 decimals).`);

const usage = {
  calls: count("API requests answered, whatever their status (public-address traffic is counted apart)."),
  refused: count(
    "Of the calls, those answered 4xx: refused for the caller's reason (402 without payment, 401, 404, " +
      "409, 422, 429, …). Never charged.",
  ),
  errors: count(
    "Of the calls, those answered 5xx: the service failed (500, an upstream's 502, an engine's 503 or " +
      "504). Never charged.",
  ),
  charged_usd: usd(
    "The price of the calls answered 2xx, paid by credit token or x402. A purchase of credit is revenue, " +
      "not a charge; a free-tier call charges nothing.",
  ),
  public_requests: count("Requests to public addresses (`/p/…`): free, whatever their status."),
  public_errors: count("Of those, answered 5xx."),
};

export const statsAnswer = z
  .object({
    from: z.string().describe("First UTC day covered (YYYY-MM-DD)."),
    to: z.string().describe("Last UTC day covered: today."),
    generated_at: z.string().describe("RFC 3339 time of this answer."),
    flush_seconds: count(
      "How far behind the counts of other isolates may be: each writes its counts to D1 at most this often " +
        "(STATS_FLUSH_SECONDS); the isolate answering has written its own.",
    ),
    totals: z.object({
      revenue_usd: usd("x402 payments settled."),
      payments: count("Settled x402 payments."),
      ...usage,
      active_resources: count("Resources active now and not past their expiry."),
    }),
    by_day: z
      .array(
        z.object({
          day: z.string().describe("UTC day, YYYY-MM-DD."),
          revenue_usd: usd("x402 payments settled that day (purchases of credit and calls paid per call)."),
          payments: count("Settled x402 payments that day."),
          ...usage,
          deliveries_dead: count("Deliveries that died that day and have not got through since."),
        }),
      )
      .describe("Every day of the period, oldest first, days without activity included."),
    by_kind: z
      .array(
        z.object({
          kind: z
            .string()
            .nullable()
            .describe(
              "The kind; null for requests about no kind (prices, credits, status and cancel by id, " +
                "documentation, the operator's own).",
            ),
          ...usage,
          active_resources: count("Resources of this kind active now and not past their expiry."),
        }),
      )
      .describe("Kinds with calls in the period or active resources now, most calls first."),
    deliveries: z.object({
      pending: count(
        "Deliveries attempted that failed and wait for a retry (touched within 24 h). Messages on the " +
          "queue not yet attempted once are not counted: that backlog is the queue's own figure.",
      ),
      dead: count(
        "Deliveries that died in the period (dead-letter queue, or their own retry schedule spent) and " +
          "have not got through since.",
      ),
    }),
  })
  .openapi("OperatorStats");

export type StatsAnswer = z.infer<typeof statsAnswer>;

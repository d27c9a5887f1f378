/**
 * Pull and ack, for the kinds that buffer what arrives for the agent to take (inboxes, and the
 * requests a handshake responder does not answer itself): items in arrival order after a cursor,
 * a long-poll, acks by seq or through a seq. Acked items leave the pull and stay in the export.
 */
import { z } from "@hono/zod-openapi";
import { exactlyOneOf, pageLimit, seqCursor } from "../../../openapi/schemas";
import { kindOf, type EngineStore } from "../../../kind/kind";
import { captureFields } from "./schema";
import { ack, ackedAt, anyPendingAfter, captureOf, counts, MAX_PAGE_BODY_BYTES, pendingAfter, type Row } from "./store";

/** Items per pull and per ack. */
export const MAX_BATCH = 100;

export const item = z
  .object({
    ...captureFields,
    seq: z.int().describe("Arrival order, from 1: the pull's cursor, and the item's id."),
    verified: z.boolean().nullable().describe("Whether the request's signature verified; null when none was checked."),
    verification_error: z.string().nullable().describe("Why it did not."),
    acked_at: z.string().nullable(),
  })
  .openapi("InboxItem");
export type Item = z.infer<typeof item>;

export const itemOf =
  (store: EngineStore) =>
  (row: Row): Item => ({
    ...captureOf(store, row),
    verified: row.verified === null ? null : row.verified === 1,
    verification_error: row.verification_error,
    acked_at: ackedAt(row),
  });

export const pullInput = z.object({
  cursor: seqCursor.describe(
    "Items after this seq (a previous pull's next_cursor); from the first pending one when absent.",
  ),
  limit: pageLimit(20),
  wait_seconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(30)
    .default(0)
    .describe("Long-poll: when nothing is pending after the cursor, wait up to this long for a request to arrive."),
});

export const pullResult = z.object({
  items: z
    .array(item)
    .describe(
      `Pending (unacked) items in arrival order; a page stops early past ${MAX_PAGE_BODY_BYTES} bytes of bodies.`,
    ),
  next_cursor: z
    .string()
    .nullable()
    .describe(
      "Pass as cursor to go on: the last item's seq, or the cursor given when none came (null only then without one).",
    ),
});

export const ackInput = exactlyOneOf(
  z.object({
    seqs: z.array(z.int().min(1)).min(1).max(MAX_BATCH).optional().describe(`Ack these items (at most ${MAX_BATCH}).`),
    through: z.int().min(1).optional().describe("Ack every item up to and including this seq."),
  }),
  ["seqs", "through"],
);

export const ackResult = z.object({
  acked: z.int().describe("Items this call acked (ones acked before are not counted again)."),
  pending: z.int().describe("Items still pending."),
});

/** The counts an info operation shows. */
export const pullCounts = {
  pending: z.int(),
  acked: z.int(),
  bytes: z.int(),
  last_seq: z.int().describe("The seq of the latest item (0 while empty)."),
};

export function pullInfo(sql: SqlStorage) {
  const { items, pending, bytes, last_seq } = counts(sql);
  return { pending, acked: items - pending, bytes, last_seq };
}

/** Every item, acked ones too, oldest first (an export). */
export const allItems = (store: EngineStore, rows: Row[]) => rows.map(itemOf(store));

/** The pull and ack operations, priced at `priceMicro` each. They read no config, so any kind can list them. */
export function pullOps(priceMicro: number) {
  const kind = kindOf<unknown>();
  return [
    kind.op({
      name: "pull",
      method: "get",
      path: "/items",
      summary: "Pending items after the cursor, in arrival order (long-poll with wait_seconds)",
      priceMicro,
      input: pullInput,
      output: pullResult,
      example: { input: { limit: 10, wait_seconds: 0 } },
      ready: (store, _config, input) => anyPendingAfter(store.sql, Number(input.cursor ?? 0)),
      run: (store, _config, input) => {
        const items = pendingAfter(store.sql, Number(input.cursor ?? 0), input.limit).map(itemOf(store));
        return { items, next_cursor: items.length ? String(items[items.length - 1]!.seq) : (input.cursor ?? null) };
      },
    }),
    kind.op({
      name: "ack",
      method: "post",
      path: "/items/ack",
      summary: `Ack items by seq (at most ${MAX_BATCH}) or everything through a seq: they leave the pull`,
      priceMicro,
      input: ackInput,
      output: ackResult,
      example: { input: { through: 1 } },
      run: (store, _config, input) => ack(store, input),
    }),
  ] as const;
}

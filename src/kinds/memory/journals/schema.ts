/**
 * Request and response shapes of journals: an append-only log with server-assigned
 * seq and time, hash-chained entries and a signed head. The chain rule and the
 * head's payload are documented field by field, since verifiers outside this
 * service depend on them.
 */
import { jsonValue } from "../../../openapi/schemas";
import { z } from "@hono/zod-openapi";
import type { Json } from "../../../json";
import { GENESIS, HASH_RULE } from "./chain";

/**
 * Entries one journal holds, and bytes of their data (canonical JSON) and types: together they keep the export
 * (every entry, with its seq, time and hash) below the 32 MiB of one Durable Object RPC answer.
 */
export const MAX_ENTRIES = 100_000;
export const MAX_JOURNAL_BYTES = 6 * 1024 * 1024;
/** One entry's data, as canonical JSON. */
export const MAX_ENTRY_BYTES = 64 * 1024;
/** Entries one batch append takes (the 1 MiB body limit applies too). */
export const MAX_BATCH = 100;
/** Entries one read returns at most... */
export const MAX_PAGE = 1000;
/** ...and a page stops early once it carries about this much data (counted in UTF-16 units; next_cursor continues). */
export const MAX_PAGE_BYTES = 1024 * 1024;

/** The `typ` header of a signed head: not an access token, a statement or a fetch receipt. */
export const HEAD_TYP = "journal-head+json";

export const journalConfig = z.object({});
export type JournalConfig = z.infer<typeof journalConfig>;

const entryType = z
  .string()
  .regex(/^[A-Za-z0-9._:/-]{1,100}$/, "must be 1 to 100 of A-Z a-z 0-9 . _ : / -")
  .nullable()
  .default(null)
  .describe("What kind of entry this is, for readers (e.g. `order.placed`); null when not given.");

const expectedSeq = z
  .int()
  .min(0)
  .optional()
  .describe(
    "Append only if the journal's last seq is exactly this (0: the journal is empty); otherwise 409 with " +
      "`current_seq`. Absent: append unconditionally.",
  );

const entryFields = {
  type: entryType,
  data: jsonValue.describe(
    `Required. The entry: any JSON value (null included), at most ${MAX_ENTRY_BYTES} bytes as canonical ` +
      `JSON (else 413).`,
  ),
};

/** `data` is a required member even though null is a value it may have. */
const hasData = (e: { data?: unknown }) => e.data !== undefined;

export const appendInput = z
  .object({ ...entryFields, expected_seq: expectedSeq })
  .refine(hasData, { message: "data is required (null is a value)", path: ["data"] });
export type AppendInput = z.infer<typeof appendInput>;

export const batchInput = z.object({
  entries: z
    .array(
      z.strictObject(entryFields).refine(hasData, { message: "data is required (null is a value)", path: ["data"] }),
    )
    .min(1)
    .max(MAX_BATCH)
    .describe(`1 to ${MAX_BATCH} entries, appended in this order with consecutive seqs and one time, all or none.`),
  expected_seq: expectedSeq,
});
export type BatchInput = z.infer<typeof batchInput>;

export type EntryInput = { type: string | null; data: Json };

const seqQuery = (what: string) => z.coerce.number().int().min(0).describe(what);
const pageSize = z.coerce
  .number()
  .int()
  .min(1)
  .max(MAX_PAGE)
  .default(100)
  .describe(
    `Entries per page (1–${MAX_PAGE}, default 100); a page also stops once it carries about ` +
      `${MAX_PAGE_BYTES} bytes of data.`,
  );

export const readInput = z.object({
  from_seq: seqQuery("First seq to return (inclusive). Default: 1 forward, the last entry backward.").optional(),
  direction: z
    .enum(["forward", "backward"])
    .default("forward")
    .describe("forward: ascending seq; backward: descending, newest first."),
  limit: pageSize,
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, "must be a next_cursor value from a previous page")
    .optional()
    .describe("next_cursor of the previous page (takes the place of from_seq)."),
});
export type ReadInput = z.infer<typeof readInput>;

export const tailInput = z.object({
  after_seq: seqQuery("Return entries with a seq greater than this (the last one you have; 0 for all)."),
  limit: pageSize,
  wait_seconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(30)
    .default(0)
    .describe("Long-poll: when nothing is after after_seq, wait up to this long for an append."),
});
export type TailInput = z.infer<typeof tailInput>;

export const entryInput = z.object({ seq: z.string().regex(/^[1-9]\d{0,14}$/, "must be a seq (1 or more)") });

const hashField = z.string().describe(`This entry's link in the hash chain: ${HASH_RULE}`);
const prevHashField = z
  .string()
  .describe(`The previous entry's hash (${GENESIS.slice(0, 8)}…, 64 zeros, for entry 1).`);

export const entry = z
  .object({
    seq: z.int().describe("Position in the journal, from 1, without gaps."),
    time: z
      .string()
      .describe("When the journal took the entry (RFC 3339 UTC, milliseconds); never decreases along the journal."),
    type: z.string().nullable(),
    data: jsonValue.describe(
      "The entry's data, in canonical form (RFC 8785: members sorted, numbers as JavaScript prints them).",
    ),
    prev_hash: prevHashField,
    hash: hashField,
  })
  .openapi("JournalEntry");

export const appended = z
  .object({
    seq: z.int(),
    time: z.string(),
    type: z.string().nullable(),
    prev_hash: prevHashField,
    hash: hashField,
  })
  .openapi("JournalAppended");

export const batchResult = z
  .object({ items: z.array(appended).describe("The new entries, in order."), head_seq: z.int() })
  .openapi("JournalBatchResult");

export const entryPage = z
  .object({
    items: z.array(entry),
    next_cursor: z
      .string()
      .nullable()
      .describe("Pass as `cursor` for the next page in the same direction; null at the end."),
    head_seq: z.int().describe("The journal's last seq when this page was read (0: empty)."),
  })
  .openapi("JournalEntryPage");

export const tailPage = z
  .object({
    items: z.array(entry),
    head_seq: z.int().describe("The journal's last seq when this page was read."),
    next_after_seq: z
      .int()
      .describe("Pass as after_seq to continue: the last seq returned, or after_seq when nothing was."),
  })
  .openapi("JournalTailPage");

export const journalInfo = z
  .object({
    head_seq: z.int().describe("The last seq (0: empty), which is also the number of entries."),
    head_hash: z.string().describe(`The last entry's hash (64 zeros when empty).`),
    head_time: z.string().nullable().describe("The last entry's time; null when empty."),
    bytes: z.int().describe(`Entry data (canonical JSON) and types held; at most ${MAX_JOURNAL_BYTES}.`),
    hash_rule: z.string().describe("How each entry's hash is computed."),
  })
  .openapi("JournalInfo");

export const headPayload = z
  .object({
    iss: z.string().describe("Who signed: the service's auth URL; its keys are at `{iss}/.well-known/jwks.json`."),
    resource_id: z.string().describe("The journal."),
    seq: z.int().describe("The last seq at signing time (0: empty)."),
    hash: z.string().describe("That entry's hash (64 zeros when empty): it commits to every entry up to seq."),
    entry_time: z.string().nullable().describe("That entry's time; null when empty."),
    signed_at: z.string().describe("When the head was read and signed (RFC 3339 UTC)."),
  })
  .openapi("JournalHeadPayload");
export type HeadPayload = z.infer<typeof headPayload>;

export const signedHead = z
  .object({
    head: headPayload.describe("The signed payload, decoded."),
    jws: z
      .string()
      .describe(
        `Compact JWS (RS256, \`kid\` in /.well-known/jwks.json, \`typ: ${HEAD_TYP}\`) whose payload is ` +
          `\`head\` as JSON. ` +
          "To check a journal: verify the JWS, then recompute the hashes of entries 1..seq (or from any " +
          "entry whose prev_hash you trust) and compare with `hash`.",
      ),
  })
  .openapi("JournalSignedHead");
export type SignedHead = z.infer<typeof signedHead>;

/**
 * Request and response shapes of idempotency: a replay firewall an agent puts in
 * front of its own side effects (Stripe's idempotency keys, the IETF
 * Idempotency-Key draft). The limits are published here, in the descriptions.
 */
import { z } from "@hono/zod-openapi";
import { pageLimit, seqCursor, jsonValue, pageOf } from "../../../openapi/schemas";

/** Largest stored result (its JSON text, UTF-8). */
export const MAX_RESULT_BYTES = 64 * 1024;
/**
 * Live keys one resource holds: with every result, its export stays well below a Durable Object RPC answer (32 MiB).
 */
export const MAX_KEYS = 10_000;
/** Bytes of stored results over all keys of one resource. */
export const MAX_RESULTS_BYTES = 16 * 1024 * 1024;
export const MAX_WINDOW_SECONDS = 30 * 86400;
export const MAX_LOCK_SECONDS = 86400;
const DEFAULT_LOCK_SECONDS = 300;

const idempotencyConfigFields = z
  .object({
    window_seconds: z
      .int()
      .min(60)
      .max(MAX_WINDOW_SECONDS)
      .default(86400)
      .describe(
        "How long a key is remembered: it is forgotten this long after the claim that took it, or after " +
          "its result was stored (whichever is later). Default 24 h, as Stripe.",
      ),
    lock_timeout_seconds: z
      .int()
      .min(1)
      .max(MAX_LOCK_SECONDS)
      .optional()
      .describe(
        `How long a claim's lock holds unless the claim names its own \`lock_seconds\`: a holder that ` +
          `neither stores a result nor releases by then (it crashed) lets the next claim with the same ` +
          `fingerprint through. At most window_seconds; default ${DEFAULT_LOCK_SECONDS} s, or window_seconds ` +
          `when that is shorter.`,
      ),
  })
  .refine((c) => c.lock_timeout_seconds === undefined || c.lock_timeout_seconds <= c.window_seconds, {
    message: "must not exceed window_seconds",
    path: ["lock_timeout_seconds"],
  })
  // The default follows the window it must fit in, so leaving it out never makes a request invalid.
  .overwrite((c) => ({
    ...c,
    lock_timeout_seconds: c.lock_timeout_seconds ?? Math.min(DEFAULT_LOCK_SECONDS, c.window_seconds),
  }));

export type IdempotencyConfig = z.infer<typeof idempotencyConfigFields> & { lock_timeout_seconds: number };
/** Typed with `lock_timeout_seconds` present, as the overwrite step guarantees. */
export const idempotencyConfig = idempotencyConfigFields as unknown as z.ZodType<IdempotencyConfig>;

export const keyField = z
  .string()
  // "." and ".." could not be addressed as a path segment: URLs resolve them (even percent-encoded).
  .regex(
    /^(?!\.\.?$)[\x21-\x7e]{1,255}$/,
    "must be 1 to 255 printable ASCII characters without spaces, and not . or ..",
  )
  .describe("The idempotency key (a UUID is a good choice); percent-encoded where it is a path segment.");

const fingerprintField = z
  .string()
  .min(1)
  .max(256)
  .describe(
    "What the request is (e.g. hex SHA-256 of method, target and body): fixed by the first claim, and a " +
      "later claim with another fingerprint is 422 `idempotency_mismatch`.",
  );

const lockTokenField = z
  .string()
  .regex(/^lock_[0-9a-f]{32}$/, "must be a lock_token returned by claim")
  .describe("The lock_token the `new` claim returned.");

export const claimInput = z.object({
  key: keyField,
  fingerprint: fingerprintField,
  lock_seconds: z
    .int()
    .min(1)
    .max(MAX_LOCK_SECONDS)
    .optional()
    .describe("This claim's lock timeout instead of the resource's lock_timeout_seconds (at most window_seconds)."),
});

export const completeInput = z
  .object({
    key: keyField,
    lock_token: lockTokenField,
    result: jsonValue.describe(
      `The outcome to replay to every later claim with this fingerprint: any JSON value up to ` +
        `${MAX_RESULT_BYTES} bytes (e.g. { status, body } of the response).`,
    ),
  })
  // z.unknown() accepts an absent member; a result must be given (null is a result).
  .refine((v) => v.result !== undefined, { message: "is required", path: ["result"] });

export const releaseInput = z.object({ key: keyField, lock_token: lockTokenField });

export const keyParam = z.object({ key: keyField });

export const KEY_STATES = ["locked", "lapsed", "completed"] as const;

export const listInput = z.object({
  state: z.enum(KEY_STATES).optional().describe("Only keys in this state."),
  limit: pageLimit(),
  cursor: seqCursor,
});

export const claimResult = z
  .discriminatedUnion("outcome", [
    z.object({
      outcome: z
        .literal("new")
        .describe("The key is yours: do the work, then store its result (or release the lock if it failed)."),
      key: z.string(),
      lock_token: z.string().describe("Needed to store the result or release the lock."),
      lock_expires_at: z
        .string()
        .describe(
          "After this, if no result was stored, the next claim with the same fingerprint takes the key " +
            "over (and this token no longer works once it has).",
        ),
      expires_at: z.string().describe("When the key is forgotten unless a result is stored meanwhile."),
      attempt: z.int().describe("1 for the first claim; more when a lapsed lock was taken over."),
    }),
    z.object({
      outcome: z
        .literal("duplicate")
        .describe("This request was already done: here is its result. Do not do it again."),
      key: z.string(),
      result: jsonValue,
      completed_at: z.string(),
      expires_at: z.string(),
    }),
  ])
  .openapi("IdempotencyClaim", {
    description:
      "`new` and `duplicate` answer 200. The other outcomes are problems carrying `outcome` and `key`: " +
      "`in_flight` is 409 `idempotency_in_flight` (with `lock_expires_at` and a Retry-After header), " +
      "`mismatch` is 422 `idempotency_mismatch`. Neither is charged.",
  });

export const keyView = z
  .object({
    key: z.string(),
    state: z
      .enum(KEY_STATES)
      .describe(
        "locked: a claim holds it; lapsed: its lock timed out without a result (the next claim with the " +
          "same fingerprint takes it over); completed: its result is stored.",
      ),
    fingerprint: z.string(),
    attempts: z.int().describe("Claims that got `new` for it."),
    claimed_at: z.string().describe("The latest `new` claim."),
    lock_expires_at: z.string().nullable().describe("null once completed."),
    completed_at: z.string().nullable(),
    expires_at: z.string().describe("When the key is forgotten."),
    result_bytes: z.int(),
    result: jsonValue.optional().describe("The stored result (by key reads only, once completed)."),
  })
  .openapi("IdempotencyKeyRecord");

export const keyPage = pageOf(keyView).openapi("IdempotencyKeyRecordPage");

export const completeResult = keyView;

export const releaseResult = z.object({ key: z.string(), released: z.literal(true) }).openapi("IdempotencyRelease");

export const deleteResult = z.object({ key: z.string(), deleted: z.literal(true) }).openapi("IdempotencyKeyDeleted");

/**
 * Request and response shapes of checkpoints: a crash checkpoint store for an
 * agent's state (LangGraph's checkpointer, Temporal's history), organised as
 * threads of checkpoints with a per-thread sequence; a checkpoint's parent may
 * sit in another thread, which is how a run forks. Limits are published here.
 */
import { z } from "@hono/zod-openapi";
import { mediaType } from "../../../http/header-fields";
import { pageLimit, seqCursor, jsonValue, pageOf, exactlyOneOf, onlyWith, singleLine } from "../../../openapi/schemas";

/** Largest checkpoint: its JSON text (UTF-8) or its bytes. */
export const MAX_VALUE_BYTES = 4 * 1024 * 1024;
/** A save's body: the base64 of the largest checkpoint (4/3 of it) and its metadata. */
export const SAVE_BODY_BYTES = 6 * 1024 * 1024;
/**
 * Values up to this size are kept in the Durable Object's SQLite (fast to save and read);
 * larger ones in R2. With MAX_CHECKPOINTS, the inline part of an export stays well below
 * what a Durable Object RPC answer carries (32 MiB); R2-held values are exported as links.
 */
export const INLINE_MAX_BYTES = 16 * 1024;
/** Checkpoints one resource keeps over all its threads. */
export const MAX_CHECKPOINTS = 1000;
/** Bytes of values one resource keeps, inline and in R2. */
export const MAX_STORED_BYTES = 1024 * 1024 * 1024;
export const MAX_TAGS = 16;

export const checkpointsConfig = z.object({
  keep_last: z
    .int()
    .min(1)
    .max(MAX_CHECKPOINTS)
    .default(100)
    .describe(
      "Checkpoints kept per thread: a save beyond it deletes that thread's oldest (its children keep their parent_id).",
    ),
});

export type CheckpointsConfig = z.infer<typeof checkpointsConfig>;

export const threadField = z
  .string()
  // Starting with a letter or digit: "." and ".." could not be addressed as a path segment.
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/,
    "must be 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
  )
  .describe("A thread: one line of checkpoints with its own sequence (a run, a conversation, a branch).");

export const checkpointIdField = z
  .string()
  .regex(/^cp_[0-9a-f]{32}$/, "must be a checkpoint_id (cp_ and 32 hex digits)");

export const saveInput = onlyWith(
  exactlyOneOf(
    z.object({
      thread: threadField.default("main"),
      value: jsonValue
        .optional()
        .describe(`The state, as JSON (up to ${MAX_VALUE_BYTES} bytes serialized). Give value or bytes_base64.`),
      bytes_base64: z
        .base64()
        .optional()
        .describe(`Or the state as bytes, standard base64 (up to ${MAX_VALUE_BYTES} bytes decoded).`),
      content_type: mediaType
        .optional()
        .describe("Of bytes_base64 only (default application/octet-stream); JSON is application/json."),
      expected_seq: z
        .int()
        .min(0)
        .optional()
        .describe(
          "Save only if the thread's latest seq is this (0: the thread must be new); else 409 with " +
            "`current_seq`. Two writers of one thread cannot both win.",
        ),
      parent_id: checkpointIdField
        .optional()
        .describe(
          "The checkpoint this one continues from (default: the thread's latest). Naming one in another " +
            "thread, or an older one, forks.",
        ),
      label: singleLine(200).optional(),
      step: z.int().optional().describe("The agent's own step number (LangGraph's metadata.step)."),
      tags: z.array(singleLine(64).min(1)).max(MAX_TAGS).default([]),
    }),
    ["value", "bytes_base64"],
  ),
  "content_type",
  "bytes_base64",
);

export type SaveInput = z.infer<typeof saveInput>;

const includeValue = z
  .enum(["true", "false"])
  .default("true")
  .transform((v) => v === "true")
  .describe("Return the value (false: metadata and content_url only).");

export const latestInput = z.object({ thread: threadField.default("main"), include_value: includeValue });

export const getInput = z.object({ include_value: includeValue });

export const checkpointParam = z.object({ checkpoint_id: checkpointIdField });

export const historyInput = z.object({
  thread: threadField.default("main"),
  limit: pageLimit(),
  cursor: seqCursor.describe("next_cursor of the previous page: the page after goes on with older checkpoints."),
});

export const threadsInput = z.object({ limit: pageLimit(), cursor: seqCursor });

export const threadParam = z.object({ thread: threadField });

const infoFields = {
  checkpoint_id: z.string(),
  thread: z.string(),
  seq: z.int().describe("1, 2, 3, … within its thread, never reused while the thread lives."),
  parent_id: z
    .string()
    .nullable()
    .describe("The checkpoint it continues from; it may since have been pruned or deleted."),
  label: z.string().nullable(),
  step: z.int().nullable(),
  tags: z.array(z.string()),
  encoding: z.enum(["json", "bytes"]),
  content_type: z.string(),
  size: z.int().describe("Bytes of the value (its JSON text, or its bytes)."),
  sha256: z.string().describe("Hex SHA-256 of those bytes."),
  content_url: z
    .string()
    .nullable()
    .describe(
      `Signed download link to the raw value when it is larger than ${INLINE_MAX_BYTES} bytes (kept in ` +
        `R2), valid until the resource ends; null for values kept inline.`,
    ),
  created_at: z.string(),
};

export const checkpointInfo = z.object(infoFields).openapi("CheckpointInfo");

export const checkpoint = z
  .object({
    ...infoFields,
    value: jsonValue.optional().describe("The JSON value (encoding json, include_value true)."),
    bytes_base64: z.string().optional().describe("The bytes, base64 (encoding bytes, include_value true)."),
  })
  .openapi("Checkpoint");

export const historyPage = pageOf(checkpointInfo).openapi("CheckpointHistoryPage");

export const threadView = z
  .object({
    thread: z.string(),
    latest_seq: z.int(),
    latest_id: z.string().nullable(),
    checkpoints: z.int().describe("Kept now (at most keep_last)."),
    forked_from: z
      .string()
      .nullable()
      .describe("parent_id of the thread's first checkpoint: where it branched off another thread, if it did."),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("CheckpointThread");

export const threadPage = pageOf(threadView).openapi("CheckpointThreadPage");

export const threadDeleted = z
  .object({ thread: z.string(), deleted: z.int().describe("Checkpoints deleted.") })
  .openapi("CheckpointThreadDeleted");

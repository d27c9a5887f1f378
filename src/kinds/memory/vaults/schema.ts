/** Request and response shapes of vaults, and the limits they enforce; the same schemas validate, type and document. */
import { jsonValue } from "../../../openapi/schemas";
import { z } from "@hono/zod-openapi";
import { utf8Length } from "../../../bytes";

/** A key's UTF-8 length, as Workers KV allows. */
export const MAX_KEY_BYTES = 512;
/**
 * A value, as compact JSON in UTF-8. A Durable Object's SQLite row holds at most 2 MB, and a
 * row carries the key and metadata too: 1.5 MiB leaves room for both with a margin.
 */
export const MAX_VALUE_BYTES = 1536 * 1024;
export const MAX_METADATA_BYTES = 1024;
/**
 * Keys per vault, and bytes (keys, values, metadata) per vault: the export must fit the 32 MiB
 * an RPC carries. A string with one character beyond Latin-1 crosses RPC at two bytes a character,
 * so 8 MiB can take 16 MiB there, and 100,000 entries add about 11 MB of field names and times.
 */
export const MAX_KEYS = 100_000;
export const MAX_VAULT_BYTES = 8 * 1024 * 1024;
/** The put body: a full-size value plus its JSON escapes and the other fields. */
export const PUT_BODY_BYTES = 2 * 1024 * 1024;
export const MAX_BATCH = 100;
export const BATCH_BODY_BYTES = 8 * 1024 * 1024;
/** Keys per page of a listing, and the value bytes a page with values carries before it stops early. */
export const MAX_LIST_LIMIT = 1000;
export const LIST_VALUE_BUDGET = 4 * 1024 * 1024;
/** Values one get_many may return together. */
export const GET_MANY_VALUE_BUDGET = 8 * 1024 * 1024;
/** A key's own TTL: at most a year (the vault's life bounds it anyway). */
export const MAX_KEY_TTL_SECONDS = 366 * 86400;

export const LIMITS = {
  max_keys: MAX_KEYS,
  max_bytes: MAX_VAULT_BYTES,
  max_key_bytes: MAX_KEY_BYTES,
  max_value_bytes: MAX_VALUE_BYTES,
  max_metadata_bytes: MAX_METADATA_BYTES,
  max_batch: MAX_BATCH,
};

export const vaultConfig = z.object({});
export type VaultConfig = z.infer<typeof vaultConfig>;

/** Lone surrogates have no UTF-8 form, so such a key could not be stored or listed faithfully. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const keyField = z
  .string()
  .min(1)
  .refine((k) => utf8Length(k) <= MAX_KEY_BYTES, `must be at most ${MAX_KEY_BYTES} bytes of UTF-8`)
  .refine((k) => k !== "." && k !== "..", "must not be . or .. (a URL would lose them)")
  .refine((k) => !LONE_SURROGATE.test(k), "must be well-formed Unicode")
  .refine((k) => !/[\u0000-\u001f\u007f-\u009f]/.test(k), "must not contain control characters")
  .describe(
    `Any text of 1 to ${MAX_KEY_BYTES} bytes of UTF-8 without control characters, except . and ..; in a ` +
      `path, percent-encode it (a / as %2F).`,
  );

export const keyParam = z.object({
  key: keyField.openapi({ param: { name: "key", in: "path" }, example: "agents/alice/profile" }),
});

const ifVersion = z
  .int()
  .min(0)
  .describe(
    "Compare-and-set in the body (MCP sends no headers): write only if the key's version is this; 0 = only " +
      "if the key does not exist.",
  );

export const preconditionHeaders = z.object({
  "if-match": z
    .string()
    .max(1024)
    .optional()
    .describe('Compare-and-set: write only if the key\'s ETag is one of these (e.g. `"42"`), or `*` = the key exists.'),
  "if-none-match": z.string().max(1024).optional().describe("`*` = create only: write only if the key does not exist."),
});
export type PreconditionHeaders = z.infer<typeof preconditionHeaders>;

const metadataField = z
  .record(z.string(), jsonValue)
  .nullable()
  .describe(`A JSON object kept with the key and shown in listings (at most ${MAX_METADATA_BYTES} bytes).`);

const ttlField = z
  .int()
  .min(1)
  .max(MAX_KEY_TTL_SECONDS)
  .nullable()
  .describe(
    "The key disappears this many seconds after the write (absent or null: it lasts as long as the vault). " +
      "Each put sets it anew.",
  );

const writeFields = {
  value: jsonValue.describe(
    `Any JSON value, at most ${MAX_VALUE_BYTES} bytes as compact JSON (a string of 1 MiB fits).`,
  ),
  metadata: metadataField.optional(),
  ttl_seconds: ttlField.optional(),
  if_version: ifVersion.optional(),
};

/** `value` is typed unknown, so zod would take its absence: say it is required. */
const valuePresent = (w: { value?: unknown }) => w.value !== undefined;

export const putInput = z.object(writeFields).refine(valuePresent, { message: "is required", path: ["value"] });
export type PutInput = z.infer<typeof putInput>;

export const deleteInput = z.object({
  if_version: z.coerce.number().pipe(ifVersion).optional().openapi({ example: 7 }),
});
export type DeleteInput = z.infer<typeof deleteInput>;

export const listInput = z.object({
  prefix: z.string().max(MAX_KEY_BYTES).optional().describe("Only keys starting with this."),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LIST_LIMIT)
    .default(100)
    .describe(`Keys per page (1–${MAX_LIST_LIMIT}, default 100).`),
  cursor: z.string().max(2048).optional().describe("next_cursor of the previous page."),
  include_values: z
    .stringbool()
    .default(false)
    .describe(`Include each value; a page then stops early once its values pass ${LIST_VALUE_BUDGET} bytes.`),
});
export type ListInput = z.infer<typeof listInput>;

export const getManyInput = z.object({
  keys: z
    .array(keyField)
    .min(1)
    .max(MAX_BATCH)
    .describe(`1 to ${MAX_BATCH} keys; their values together at most ${GET_MANY_VALUE_BUDGET} bytes.`),
});

const batchPut = z
  .strictObject({ op: z.literal("put"), key: keyField, ...writeFields })
  .refine(valuePresent, { message: "is required", path: ["value"] });
const batchDelete = z.strictObject({ op: z.literal("delete"), key: keyField, if_version: ifVersion.optional() });
export const batchInput = z.object({
  operations: z
    .array(z.discriminatedUnion("op", [batchPut, batchDelete]))
    .min(1)
    .max(MAX_BATCH)
    .describe(
      `1 to ${MAX_BATCH} puts and deletes, applied in order, all or none: if one is refused (its ` +
        `if_version, a limit), none happens.`,
    ),
});
export type BatchInput = z.infer<typeof batchInput>;

const entryFields = {
  key: z.string(),
  version: z
    .int()
    .describe(
      "The vault's write sequence number at the key's last write: it grows with every write, never " +
        "repeats, and is the ETag.",
    ),
  metadata: z.record(z.string(), jsonValue).nullable(),
  bytes: z.int().describe("Bytes counted against the vault: key, value and metadata (compact JSON, UTF-8)."),
  updated_at: z.string(),
  expires_at: z.string().nullable().describe("When the key disappears; null: with the vault."),
};

export const entryInfo = z.object(entryFields).openapi("VaultEntryInfo");
export const entry = z.object({ ...entryFields, value: jsonValue }).openapi("VaultEntry");
export type EntryInfo = z.infer<typeof entryInfo>;
export type Entry = z.infer<typeof entry>;

export const putResult = entryInfo
  .extend({ created: z.boolean().describe("true when the key did not exist before.") })
  .openapi("VaultPutResult");

export const deleteResult = z
  .object({
    key: z.string(),
    deleted: z.boolean().describe("false when there was no such key."),
    version: z.int().nullable().describe("The version deleted."),
  })
  .openapi("VaultDeleteResult");

export const listPage = z
  .object({
    items: z.array(entryInfo.extend({ value: jsonValue.optional() })),
    next_cursor: z.string().nullable(),
  })
  .openapi("VaultKeyPage");

export const getManyResult = z
  .object({ items: z.array(z.object({ key: z.string(), found: z.boolean(), entry: entry.nullable() })) })
  .openapi("VaultGetMany");

export const batchResult = z
  .object({
    results: z.array(
      z.object({
        op: z.enum(["put", "delete"]),
        key: z.string(),
        version: z.int().nullable(),
        created: z.boolean().optional(),
        deleted: z.boolean().optional(),
      }),
    ),
    version: z.int().describe("The vault's write sequence number after the batch."),
  })
  .openapi("VaultBatchResult");

export const vaultInfo = z
  .object({
    keys: z.int(),
    bytes: z.int(),
    version: z.int().describe("The vault's write sequence number (the version the next write exceeds)."),
    next_expiry_at: z.string().nullable().describe("When the next key with a TTL disappears."),
    limits: z.object({
      max_keys: z.int(),
      max_bytes: z.int(),
      max_key_bytes: z.int(),
      max_value_bytes: z.int(),
      max_metadata_bytes: z.int(),
      max_batch: z.int(),
    }),
  })
  .openapi("VaultInfo");

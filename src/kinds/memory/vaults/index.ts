/**
 * vaults: a key-value namespace (Workers KV, Redis). Values are any JSON up to 1.5 MiB,
 * with optional metadata and a per-key TTL; every write gets a version (the ETag) for
 * compare-and-set with If-Match / If-None-Match; prefix listing with a cursor; batches
 * of writes that apply all or none. State lives in the resource's SQLite (store.ts).
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { applyBatch, deleteKey, getKey, putKey } from "./keys";
import { exportVault, getMany, listKeys } from "./listing";
import { etag } from "./preconditions";
import { initVault, nextExpiry, purgeExpired, totals } from "./store";
import {
  BATCH_BODY_BYTES,
  LIMITS,
  MAX_BATCH,
  PUT_BODY_BYTES,
  batchInput,
  batchResult,
  deleteInput,
  deleteResult,
  entry,
  getManyInput,
  getManyResult,
  keyParam,
  listInput,
  listPage,
  preconditionHeaders,
  putInput,
  putResult,
  vaultConfig,
  vaultInfo,
  type VaultConfig,
  MAX_KEY_BYTES,
  MAX_VALUE_BYTES,
  MAX_METADATA_BYTES,
  MAX_KEYS,
  MAX_VAULT_BYTES,
} from "./schema";
import { TABLES } from "./store";

const READ_PRICE = 100; // µUSD
const WRITE_PRICE = 200;
const LIST_PRICE = 200;
const GET_MANY_PRICE = 500;
/** Up to MAX_BATCH writes: a fifth of their price one by one. */
const BATCH_PRICE = 4000;

const etagHeader = {
  documented: { ETag: "The key's version, quoted: send it back in If-Match for a compare-and-set." },
  of: (out: { version: number }) => ({ ETag: etag(out.version) }),
};

const kind = kindOf<VaultConfig>();

export const vaults = kind.define({
  kind: "vaults",
  family: "memory",
  title: "Vault",
  summary:
    "Key-value namespace: get/put/delete JSON values (up to 1.5 MiB) with metadata and a per-key TTL, " +
    "compare-and-set by version (ETag, If-Match, If-None-Match: *), prefix listing with a cursor, and " +
    "batches of writes that apply all or none.",
  createSchema: vaultConfig,
  example: { label: "agent memory" },
  migrations: [{ sql: TABLES }],
  // Holds up to 8 MiB: the day rate covers the storage, the operations their work.
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: {
    max_key_bytes: MAX_KEY_BYTES,
    max_value_bytes: MAX_VALUE_BYTES,
    max_metadata_bytes: MAX_METADATA_BYTES,
    max_keys: MAX_KEYS,
    max_bytes: MAX_VAULT_BYTES,
    max_batch: MAX_BATCH,
  },
  init: (store) => initVault(store),
  usage: (store) => {
    const t = totals(store);
    return { keys: t.keys, bytes: t.bytes };
  },
  exportData: (store) => exportVault(store),
  // Expired keys are invisible at once; the alarm removes them at the earliest expiry (a chunk per run).
  timer: { nextDue: (store) => nextExpiry(store), fire: (store) => void purgeExpired(store) },
  ops: [
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Keys, bytes, the write sequence and the limits",
      priceMicro: READ_PRICE,
      input: noInput,
      output: vaultInfo,
      run: (store) => ({ ...totals(store), limits: LIMITS }),
    }),
    kind.op({
      name: "get",
      method: "get",
      path: "/keys/{key}",
      summary: "Read a key: value, metadata, version (also as ETag) and expiry",
      priceMicro: READ_PRICE,
      keys: { at: ["key"] },
      params: keyParam,
      input: noInput,
      output: entry,
      errors: [404],
      responseHeaders: etagHeader,
      example: { params: { key: "agents/alice/profile" }, after: ["put"] },
      run: (store, _config, input) => getKey(store, input),
    }),
    kind.op({
      name: "put",
      method: "put",
      path: "/keys/{key}",
      summary:
        "Write a key; with If-Match / If-None-Match: * (or if_version) only if its version is as expected, else 409",
      priceMicro: WRITE_PRICE,
      keys: { at: ["key"] },
      params: keyParam,
      headers: preconditionHeaders,
      maxBodyBytes: PUT_BODY_BYTES,
      input: putInput,
      output: putResult,
      errors: [409, 413],
      responseHeaders: etagHeader,
      example: {
        params: { key: "agents/alice/profile" },
        input: {
          value: { name: "Alice", plan: "pro", last_run: "2026-11-24T09:00:00Z" },
          metadata: { source: "crawler" },
          ttl_seconds: 86400,
        },
      },
      run: (store, _config, input) => putKey(store, input),
    }),
    kind.op({
      name: "delete",
      method: "delete",
      path: "/keys/{key}",
      summary: "Delete a key; with If-Match (or if_version) only at that version, else 409",
      priceMicro: READ_PRICE,
      keys: { at: ["key"] },
      params: keyParam,
      headers: preconditionHeaders,
      input: deleteInput,
      output: deleteResult,
      errors: [409],
      example: { params: { key: "agents/alice/profile" }, after: ["put"] },
      run: (store, _config, input) => deleteKey(store, input),
    }),
    kind.op({
      name: "list",
      method: "get",
      path: "/keys",
      summary: "Keys in key order, by prefix, with a cursor; values on request",
      priceMicro: LIST_PRICE,
      keys: { prefix: "prefix" },
      input: listInput,
      output: listPage,
      example: { input: { prefix: "agents/", limit: 100, include_values: "false" } },
      run: (store, _config, input) => listKeys(store, input),
    }),
    kind.op({
      name: "get_many",
      method: "post",
      path: "/batch/get",
      summary: `Read up to ${MAX_BATCH} keys at once`,
      priceMicro: GET_MANY_PRICE,
      keys: { at: ["keys.*"] },
      input: getManyInput,
      output: getManyResult,
      errors: [413],
      example: { input: { keys: ["agents/alice/profile", "agents/bob/profile"] }, after: ["put"] },
      run: (store, _config, input) => getMany(store, input.keys),
    }),
    kind.op({
      name: "batch",
      method: "post",
      destructive: true,
      path: "/batch",
      summary: `Up to ${MAX_BATCH} puts and deletes with per-item if_version, all or none`,
      priceMicro: BATCH_PRICE,
      keys: { at: ["operations.*.key"] },
      maxBodyBytes: BATCH_BODY_BYTES,
      input: batchInput,
      output: batchResult,
      errors: [409, 413],
      example: {
        input: {
          operations: [
            { op: "put", key: "agents/bob/profile", value: { name: "Bob" }, if_version: 0 },
            { op: "delete", key: "agents/carol/profile" },
          ],
        },
      },
      run: (store, _config, input) => applyBatch(store, input),
    }),
  ],
});

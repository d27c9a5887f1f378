/**
 * journals: an append-only journal (KurrentDB streams, Redis Streams) with
 * server-assigned seq and time, optimistic appends (`expected_seq`), range reads,
 * a long-poll tail, a hash chain over the entries and a signed head.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { append, exportAll, hasAfter, info, init, one, read, tail, head } from "./store";
import { signHead } from "./head";
import {
  MAX_BATCH,
  MAX_ENTRIES,
  MAX_ENTRY_BYTES,
  MAX_JOURNAL_BYTES,
  appendInput,
  appended,
  batchInput,
  batchResult,
  entry,
  entryInput,
  entryPage,
  journalConfig,
  journalInfo,
  readInput,
  signedHead,
  tailInput,
  tailPage,
  type JournalConfig,
  type SignedHead,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD, $0.0001 per call
/** A full batch at 10 µUSD per entry: from 10 entries on, cheaper than appending them one by one. */
const BATCH_PRICE = 1000;
/** An RSA signature per call. */
const HEAD_PRICE = 500;

const kind = kindOf<JournalConfig>();

export const journals = kind.define({
  kind: "journals",
  family: "memory",
  title: "Journal",
  summary:
    "Append-only journal: server-assigned seq and time, optimistic appends with expected_seq, range reads, " +
    "a long-poll tail, " +
    "entries hash-chained with SHA-256 (the rule is under JournalEntry.hash) and a head signed as a JWS " +
    "verifiable against /.well-known/jwks.json. " +
    `Up to ${MAX_ENTRIES} entries of at most ${MAX_ENTRY_BYTES} bytes, ${MAX_JOURNAL_BYTES} bytes of data ` +
    `and types in all.`,
  createSchema: journalConfig,
  example: { label: "agent decision log", ttl_seconds: 2592000 },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: {
    max_entries: MAX_ENTRIES,
    max_bytes: MAX_JOURNAL_BYTES,
    max_entry_bytes: MAX_ENTRY_BYTES,
    max_batch: MAX_BATCH,
  },
  init,
  usage: (store) => {
    const h = head(store.sql);
    return { entries: h.head_seq, bytes: h.bytes };
  },
  exportData: (store) => exportAll(store),
  ops: [
    // First of the /entries ops: the contract fixture's paid call.
    kind.op({
      name: "append",
      method: "post",
      path: "/entries",
      summary: "Append one entry (optionally only onto expected_seq)",
      priceMicro: OP_PRICE,
      input: appendInput,
      output: appended,
      errors: [409, 413],
      example: { input: { type: "decision", data: { chose: "plan-b", because: "plan-a timed out" }, expected_seq: 0 } },
      run: (store, _config, input) => append(store, [input], input.expected_seq, () => "data").items[0]!,
    }),
    kind.op({
      name: "append_batch",
      method: "post",
      path: "/entries/batch",
      summary: `Append up to ${MAX_BATCH} entries in order, all or none (one price for the batch)`,
      priceMicro: BATCH_PRICE,
      input: batchInput,
      output: batchResult,
      errors: [409, 413],
      example: {
        input: {
          entries: [
            { type: "tool.called", data: { tool: "search", query: "zeitvault" } },
            { type: "tool.result", data: { hits: 3 } },
          ],
        },
      },
      run: (store, _config, input) => append(store, input.entries, input.expected_seq, (i) => `entries.${i}.data`),
    }),
    kind.op({
      name: "read",
      method: "get",
      path: "/entries",
      summary: "A range of entries, forward or backward, with paging",
      priceMicro: OP_PRICE,
      input: readInput,
      output: entryPage,
      example: { input: { from_seq: 1, direction: "forward", limit: 100 }, after: ["append"] },
      run: (store, _config, input) => read(store, input),
    }),
    kind.op({
      name: "entry",
      method: "get",
      path: "/entries/{seq}",
      summary: "One entry by seq",
      priceMicro: OP_PRICE,
      params: entryInput,
      input: noInput,
      output: entry,
      errors: [404],
      example: { params: { seq: "1" }, after: ["append"] },
      run: (store, _config, input) => one(store, Number(input.seq)),
    }),
    kind.op({
      name: "tail",
      method: "get",
      path: "/tail",
      summary: "Entries after after_seq, long-polling up to wait_seconds for the next append",
      priceMicro: OP_PRICE,
      input: tailInput,
      output: tailPage,
      example: { input: { after_seq: 0, limit: 100, wait_seconds: 0 }, after: ["append"] },
      ready: (store, _config, input) => hasAfter(store, input),
      run: (store, _config, input) => tail(store, input),
    }),
    kind.op({
      name: "head",
      method: "get",
      path: "/head",
      summary: "The head (last seq and hash), signed as a compact JWS",
      priceMicro: HEAD_PRICE,
      input: noInput,
      output: signedHead,
      prepare: (ctx) => signHead(ctx),
      // What prepare read and signed, unchanged: a later append must not pair a new seq with an old signature.
      run: (_store, _config, _input, signed: SignedHead) => signed,
    }),
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "Head seq, hash and time (unsigned), bytes held and the hash rule",
      priceMicro: OP_PRICE,
      input: noInput,
      output: journalInfo,
      run: (store) => info(store),
    }),
  ],
});

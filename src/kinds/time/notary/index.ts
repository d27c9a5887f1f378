/**
 * notary: RFC 3161 time stamps that `openssl ts -verify` accepts, kept in a hash-chained log (RFC 3161,
 * OpenTimestamps).
 */
import { kindOf } from "../../../kind/kind";
import { append, count, exportAll, find, list, lookup, sign, status } from "./store";
import {
  MAX_STAMPS,
  MAX_DATA_BYTES,
  findInput,
  listInput,
  lookupInput,
  notaryConfig,
  stamp,
  stampInput,
  stampPage,
  type NotaryConfig,
} from "./schema";
import { TABLES } from "./store";
import { registerTsaRoutes } from "./certificate-route";

const STAMP_PRICE = 1000; // µUSD: a signature, and about 1 KB kept for the resource's life
const OP_PRICE = 100;

const kind = kindOf<NotaryConfig>();

export const notary = kind.define({
  kind: "notary",
  family: "time",
  title: "Notary",
  summary:
    "Stamps a SHA-256 (or data, hashed server-side) with an RFC 3161 time-stamp token that `openssl ts " +
    "-verify` accepts against GET /v1/tsa/certificate.pem; every stamp is kept in a hash-chained log.",
  createSchema: notaryConfig,
  example: { label: "build provenance", ttl_seconds: 2592000 },
  migrations: [{ sql: TABLES }],
  routes: registerTsaRoutes,
  dayPriceMicro: 1000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: { max_stamps: MAX_STAMPS, max_data_bytes: MAX_DATA_BYTES },
  usage: (store) => ({ stamps: count(store.sql) }),
  status,
  exportData: exportAll,
  ops: [
    kind.op({
      name: "stamp",
      method: "post",
      path: "/stamps",
      summary: "Time-stamp a SHA-256 or data (RFC 3161)",
      priceMicro: STAMP_PRICE,
      input: stampInput,
      output: stamp,
      errors: [413],
      example: {
        input: { sha256: "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9", nonce: "1f2e3d4c" },
      },
      // Signing awaits WebCrypto, so it runs before the transaction; run only numbers and chains it.
      prepare: (ctx, _config, input) => sign(ctx, input),
      run: (store, _config, _input, signed) => append(store, signed),
    }),
    kind.op({
      name: "stamps",
      method: "get",
      path: "/stamps",
      summary: "The log, oldest first",
      priceMicro: OP_PRICE,
      input: listInput,
      output: stampPage,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => list(store, input.limit, input.cursor),
    }),
    kind.op({
      name: "get_stamp",
      method: "get",
      path: "/stamps/lookup",
      summary: "One stamp, by seq or serial",
      priceMicro: OP_PRICE,
      input: lookupInput,
      output: stamp,
      example: { input: { seq: 1 }, after: ["stamp"] },
      run: (store, _config, input) => lookup(store, input),
    }),
    kind.op({
      name: "find_stamps",
      method: "get",
      path: "/stamps/find",
      summary: "Stamps of one SHA-256",
      priceMicro: OP_PRICE,
      input: findInput,
      output: stampPage,
      example: {
        input: { sha256: "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9" },
        after: ["stamp"],
      },
      run: (store, _config, input) => find(store, input.sha256, input.limit, input.cursor),
    }),
  ],
});

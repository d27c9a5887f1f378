/**
 * attest: attested fetch. The service fetches a URL for the agent, keeps the
 * exact bytes for the resource's lifetime and signs a receipt over what was
 * asked and what came back, verifiable against the JWKS by anyone later
 * (TLSNotary's goal with a trusted notary instead of MPC; WACZ signing).
 * No fetch at creation: a create has no asynchronous step, and a fetch is
 * a paid operation of its own, with its own failure modes.
 */
import { kindOf } from "../../../kind/kind";
import { exportAll, get, list, record, stored } from "./store";
import { discardFetch, fetchAndKeep, readInline } from "./fetch";
import {
  MAX_BODY_BYTES,
  MAX_FETCHES,
  MAX_STORED_BYTES,
  attestConfig,
  attestedFetch,
  fetchInput,
  fetchPage,
  getInput,
  listInput,
  type AttestConfig,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD
/** A guarded fetch of up to 10 MiB, an RSA signature, and the bytes kept in R2 for the resource's life. */
const FETCH_PRICE = 2000;

const kind = kindOf<AttestConfig>();

export const attest = kind.define({
  kind: "attest",
  family: "time",
  title: "Attested fetch",
  summary:
    "The service fetches a URL for you and returns the content with a signed receipt (compact JWS over " +
    "url, final url, method, status, selected headers, body SHA-256, time) " +
    `verifiable against /.well-known/jwks.json; the bytes stay downloadable for the TTL. Up to ` +
    `${MAX_FETCHES} fetches of at most ${MAX_BODY_BYTES} bytes, ${MAX_STORED_BYTES} bytes in all.`,
  createSchema: attestConfig,
  example: { receipt_headers: ["content-type", "etag", "last-modified"], max_bytes: 1048576 },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: { max_body_bytes: MAX_BODY_BYTES, max_fetches: MAX_FETCHES, max_stored_bytes: MAX_STORED_BYTES },
  usage: (store) => stored(store.sql),
  exportData: (store) => exportAll(store),
  ops: [
    // First: the contract fixture's paid call.
    kind.op({
      name: "fetch",
      method: "post",
      path: "/fetches",
      summary:
        "Fetch a URL now and get the content with a signed receipt (a target's 4xx/5xx is attested too; a " +
        "network failure is 502 and not charged)",
      priceMicro: FETCH_PRICE,
      input: fetchInput,
      output: attestedFetch,
      errors: [413, 502],
      example: {
        input: {
          url: "https://example.com/terms",
          headers: { "accept-language": "en" },
          receipt_headers: ["content-type", "etag", "last-modified"],
        },
      },
      prepare: (ctx, config, input) => fetchAndKeep(ctx, config, input),
      run: (store, _config, _input, fetched) => record(store, fetched),
      discard: (ctx, fetched) => discardFetch(ctx, fetched),
    }),
    kind.op({
      name: "fetches",
      method: "get",
      path: "/fetches",
      summary: "List fetches with their receipts, oldest first",
      priceMicro: OP_PRICE,
      input: listInput,
      output: fetchPage,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => list(store, input.limit, input.cursor),
    }),
    kind.op({
      name: "get_fetch",
      method: "get",
      path: "/fetch",
      summary: "One fetch by fetch_id, with its receipt and (when small) its content",
      priceMicro: OP_PRICE,
      input: getInput,
      output: attestedFetch,
      errors: [404],
      example: {
        input: { fetch_id: "att_5c0d2e9f4b1a4c3e8d7f6a5b4c3d2e1f", include_content: "false" },
        after: ["fetch"],
      },
      prepare: (ctx, _config, input) => readInline(ctx, input.fetch_id, input.include_content),
      run: (store, _config, input, content) => get(store, input.fetch_id, content),
    }),
  ],
});

/**
 * bins: a request bin (webhook.site). Its public address captures every request, at the address
 * or any path below it, whole: method, path, query, every header, the raw body (byte-exact, up to
 * 10 MiB), the client address and timing, and answers as the agent configured (status, headers,
 * body, an optional delay). The agent lists captures newest first and fetches one; a person opens
 * the view link to see them.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { allRows, clear, counts, rowOf, TABLES } from "../captures/store";
import { seqParam } from "../captures/schema";
import { binFace } from "./public";
import { captureView, newestPage, RESPONSE_TABLE, responseOf, saveResponse, viewUrl } from "./store";
import {
  binCapture,
  binCreate,
  binInfo,
  binResponse,
  clearResult,
  listInput,
  listResult,
  MAX_BYTES,
  MAX_CAPTURE_BYTES,
  MAX_CAPTURES,
  MAX_DELAY_MS,
  MAX_RESPONSE_BODY_BYTES,
  type BinConfig,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

const kind = kindOf<BinConfig>();

const info = (store: Parameters<typeof viewUrl>[0]) => {
  const { items, bytes, last_seq } = counts(store.sql);
  return { captures: items, bytes, last_seq, response: responseOf(store.sql), view_url: viewUrl(store) };
};

export const bins = kind.define({
  kind: "bins",
  family: "address",
  title: "Request bin",
  summary:
    "A public URL capturing every request at or below it whole (method, path, query, headers, raw body up " +
    "to 10 MiB, client address, timing), answered as you configure; list, fetch and download captures, or " +
    "open the view link. Capturing is free.",
  createSchema: binCreate,
  example: {
    response: {
      status: 202,
      content_type: "application/json",
      body: '{"ok":true}',
      headers: { "x-bin": "zeitvault" },
      delay_ms: 0,
    },
  },
  migrations: [{ sql: [...TABLES, RESPONSE_TABLE] }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 30 * 86400,
  limits: {
    max_captures: MAX_CAPTURES,
    max_bytes: MAX_BYTES,
    max_capture_bytes: MAX_CAPTURE_BYTES,
    max_delay_ms: MAX_DELAY_MS,
    max_response_body_bytes: MAX_RESPONSE_BODY_BYTES,
  },
  init: (store, config) => void saveResponse(store.sql, config.response),
  usage: (store) => {
    const { items, bytes } = counts(store.sql);
    return { captures: items, bytes };
  },
  exportData: (store) => ({ ...info(store), captures: allRows(store.sql).map(captureView(store)) }),
  public: binFace,
  ops: [
    kind.op({
      name: "list",
      method: "get",
      path: "/captures",
      summary: "Captures, newest first",
      priceMicro: OP_PRICE,
      input: listInput,
      output: listResult,
      example: { input: { limit: 10 } },
      run: (store, _config, input) => {
        const { rows, next } = newestPage(store, input.before === undefined ? null : Number(input.before), input.limit);
        return { items: rows.map(captureView(store)), next_cursor: next === null ? null : String(next) };
      },
    }),
    kind.op({
      name: "get_capture",
      method: "get",
      path: "/captures/{seq}",
      summary: "One capture",
      priceMicro: OP_PRICE,
      params: seqParam,
      input: noInput,
      output: binCapture,
      errors: [404],
      example: { params: { seq: "1" }, arrivals: 1 },
      run: (store, _config, input) => captureView(store)(rowOf(store.sql, Number(input.seq), "bin")),
    }),
    kind.op({
      name: "clear",
      method: "delete",
      path: "/captures",
      summary: "Delete every capture (and its stored body)",
      priceMicro: OP_PRICE,
      input: noInput,
      output: clearResult,
      run: (store) => ({ deleted: clear(store) }),
    }),
    kind.op({
      name: "set_response",
      method: "put",
      path: "/response",
      summary: "Change how the bin answers from now on",
      priceMicro: OP_PRICE,
      input: binResponse,
      output: binResponse,
      example: {
        input: {
          status: 503,
          content_type: "text/plain; charset=utf-8",
          body: "try later",
          headers: { "retry-after": "30" },
          delay_ms: 0,
        },
      },
      run: (store, _config, input) => saveResponse(store.sql, input),
    }),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Counts, the configured answer and the view link",
      priceMicro: OP_PRICE,
      input: noInput,
      output: binInfo,
      run: (store) => info(store),
    }),
  ],
});

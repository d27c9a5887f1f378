/**
 * transformers: a payload transformer (Svix transformations). Its public address takes JSON,
 * reshapes it with a JSONata expression (and optionally derives headers), and forwards the result
 * to the target through the delivery pipeline: signed, retried, logged. `test` runs the
 * expressions on a sample without sending; a request whose expression fails sends nothing and is
 * logged.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { checkExpression, EXPRESSION_LIMITS } from "../../../expressions/jsonata";
import type { Json } from "../../../json";
import { transformerFace } from "./public";
import { transform } from "./transform";
import { counts, expressionsOf, logPage, saveExpressions, TABLES } from "./store";
import {
  expressions,
  logInput,
  logPage as logPageSchema,
  MAX_INPUT_BYTES,
  MAX_MESSAGES,
  MAX_OUTPUT_BYTES,
  testInput,
  testResult,
  transformerCreate,
  transformerInfo,
  type Expressions,
  type TransformerConfig,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

const kind = kindOf<TransformerConfig>();

/** Both expressions parse and use no risky regular expression (422 naming the field). */
function checkExpressions(e: { expression?: string; headers_expression?: string | null }): void {
  if (e.expression !== undefined) checkExpression(e.expression, "expression");
  if (e.headers_expression) checkExpression(e.headers_expression, "headers_expression");
}

export const transformers = kind.define({
  kind: "transformers",
  family: "address",
  title: "Payload transformer",
  summary:
    "A public URL taking JSON, reshaped by a JSONata expression (headers too, optionally) and forwarded to " +
    "your target through the delivery pipeline; `test` runs it on a sample; a failing expression sends " +
    "nothing and is logged.",
  createSchema: transformerCreate,
  example: {
    target_url: "https://example.com/hooks/slack",
    expression: '{ "text": "Order " & data.order_id & " paid: " & $string(data.amount) & " " & data.currency }',
    headers_expression: '{ "x-order": $string(data.order_id) }',
  },
  targetFields: ["target_url"],
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: {
    max_input_bytes: MAX_INPUT_BYTES,
    max_output_bytes: MAX_OUTPUT_BYTES,
    max_messages: MAX_MESSAGES,
    max_expression_steps: EXPRESSION_LIMITS.steps,
  },
  sends: {
    "transformer.request":
      "The transformed body (JSON) to the target, with the request's headers, the configured ones and " +
      "those the headers expression derived.",
  },
  sealCreate: async (_env, config) => {
    checkExpressions(config);
    return { config, sealed: null };
  },
  init: (store, config) =>
    void saveExpressions(store.sql, { expression: config.expression, headers_expression: config.headers_expression }),
  usage: (store) => counts(store.sql),
  exportData: (store) => ({
    ...counts(store.sql),
    ...expressionsOf(store.sql),
    log: logPage(store.sql, 0, MAX_MESSAGES).items,
  }),
  public: transformerFace,
  ops: [
    kind.op({
      name: "test",
      method: "post",
      path: "/test",
      summary: "Run the expressions (or others) on a sample; nothing is sent",
      priceMicro: OP_PRICE,
      input: testInput,
      output: testResult,
      example: {
        input: { sample: { data: { order_id: 1042, amount: 42, currency: "EUR" } }, headers: { "x-source": "shop" } },
      },
      prepare: async (ctx, _config, input) => {
        checkExpressions(input);
        const current = expressionsOf(ctx.sql);
        const out = await transform(
          {
            expression: input.expression ?? current.expression,
            headers_expression: input.headers_expression ?? current.headers_expression,
          },
          input.sample as Json,
          { headers: input.headers, method: "POST", path: "", query: {} },
        );
        return out.ok
          ? { ok: true, body: out.body, headers: out.headers, error: null }
          : { ok: false, body: null, headers: {}, error: out.error };
      },
      run: (_store, _config, _input, result) => result,
    }),
    kind.op({
      name: "set_expressions",
      method: "put",
      path: "/expressions",
      summary: "Replace the expressions: requests from now on use these",
      priceMicro: OP_PRICE,
      input: expressions,
      output: expressions,
      example: { input: { expression: '{ "event": type, "id": data.id }', headers_expression: null } },
      prepare: async (_ctx, _config, input) => checkExpressions(input),
      run: (store, _config, input: Expressions) => saveExpressions(store.sql, input),
    }),
    kind.op({
      name: "log",
      method: "get",
      path: "/log",
      summary: "Each request: forwarded (with its delivery), skipped, or failed and why",
      priceMicro: OP_PRICE,
      input: logInput,
      output: logPageSchema,
      example: { input: { limit: 10 } },
      run: (store, _config, input) => logPage(store.sql, Number(input.cursor ?? 0), input.limit),
    }),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Counts and the current expressions",
      priceMicro: OP_PRICE,
      input: noInput,
      output: transformerInfo,
      run: (store) => ({ ...counts(store.sql), ...expressionsOf(store.sql) }),
    }),
  ],
});

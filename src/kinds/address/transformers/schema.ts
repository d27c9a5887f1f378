/**
 * Request and response shapes of transformers: a public URL whose JSON requests are reshaped by a
 * JSONata expression and forwarded to a target through the delivery pipeline (Svix
 * transformations). The same schemas validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { jsonValue, pageLimit, seqCursor } from "../../../openapi/schemas";
import { requestFields } from "../../../delivery/outbound";
import { headerName, headerValue } from "../../../http/header-fields";
import { MAX_ATTEMPTS, MAX_RETRY_DELAY_SECONDS } from "../../../delivery/schedule";
import { EXPRESSION_LIMITS, MAX_EXPRESSION_CHARS } from "../../../expressions/jsonata";

/** A request's JSON body. */
export const MAX_INPUT_BYTES = 1024 * 1024;
/** What the expression yields, as JSON. */
export const MAX_OUTPUT_BYTES = 1024 * 1024;
/** Requests one transformer takes in its life (each is logged). */
export const MAX_MESSAGES = 100_000;

const expressionText = z.string().min(1).max(MAX_EXPRESSION_CHARS);

export const expressions = z
  .object({
    expression: expressionText.describe(
      `JSONata (at most ${MAX_EXPRESSION_CHARS} characters, ${EXPRESSION_LIMITS.steps} evaluation steps): ` +
        `\`$\` is the request's JSON body; \`$headers\`, \`$method\`, \`$path\` and \`$query\` are bound. ` +
        "Its result is the body sent on, as JSON; a result of null (or none) sends nothing (the request is " +
        "logged as skipped).",
    ),
    headers_expression: expressionText
      .nullable()
      .default(null)
      .describe(
        "JSONata yielding an object of header names to string values, added to what is sent (same " +
          "bindings; `$` is the body).",
      ),
  })
  .strict()
  .openapi("TransformerExpressions");
export type Expressions = z.infer<typeof expressions>;

export const transformerCreate = z
  .object({
    target_url: requestFields.url.describe("Where the transformed request goes."),
    method: requestFields.method,
    headers: requestFields.headers.describe(
      "Sent with every request (the request's own are passed on, as fanout does, under these).",
    ),
    retry_delays: z
      .array(z.int().min(1).max(MAX_RETRY_DELAY_SECONDS))
      .max(MAX_ATTEMPTS - 1)
      .nullable()
      .default(null)
      .describe("Seconds before each retry; null: the service's schedule."),
    ...expressions.shape,
  })
  .strict();
export type TransformerConfig = z.infer<typeof transformerCreate>;

export const testInput = z
  .object({
    sample: jsonValue.describe("A request body to run the expressions on."),
    headers: z.record(headerName, headerValue).default({}).describe("The sample's headers (`$headers`)."),
    expression: expressionText.optional().describe("Try this expression instead of the transformer's own."),
    headers_expression: expressionText
      .optional()
      .describe("Try this headers expression instead of the transformer's own."),
  })
  .strict();

export const testResult = z.object({
  ok: z.boolean(),
  body: jsonValue.nullable().describe("What would be sent (null: nothing would be)."),
  headers: z.record(z.string(), z.string()).describe("The headers the headers expression adds."),
  error: z.string().nullable().describe("Why the expression failed."),
});

export const logEntry = z.object({
  seq: z.int(),
  received_at: z.string(),
  outcome: z.enum(["forwarded", "skipped", "failed"]),
  error: z.string().nullable(),
  delivery_id: z
    .string()
    .nullable()
    .describe("The forwarded request in the attempt log (`GET /v1/transformers/{id}/deliveries`)."),
  input_bytes: z.int(),
  output_bytes: z.int().nullable(),
});

export const logInput = z.object({
  cursor: seqCursor.describe("A previous page's next_cursor."),
  limit: pageLimit(20),
});
export const logPage = z.object({ items: z.array(logEntry), next_cursor: z.string().nullable() });

export const transformerInfo = z.object({
  forwarded: z.int(),
  skipped: z.int(),
  failed: z.int(),
  expression: z.string(),
  headers_expression: z.string().nullable(),
});

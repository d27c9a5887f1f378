/** A kind's operation routes (/v1/{kind}/{id}/…), built from its ops: validated, authorized, paid and run. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { AnyKind } from "../kind/kind";
import type { AnyOp } from "../kind/op";
import { managementCredential } from "../auth/credentials";
import { runPaid, type PaidCall, type Payer } from "../money/payment";
import { resourceStub } from "../stubs";
import { AppError } from "../http/errors";
import { closeObject, objectResponse, openObject } from "../kind/downloads";
import { isMediaType } from "../http/header-fields";
import { noInput, resourceIdParam, withMetaOf } from "../openapi/schemas";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { resourceAnswer } from "./record";
import { TAGS } from "../openapi/tags";
import type { Json } from "../json";
import type { OpInput } from "../rpc/resource";
import { requestBytes } from "../http/idempotency-store";
import { toHex } from "../bytes";
import { MANAGED_PAID } from "../openapi/security";

/** An unknown field is refused (422), not ignored: a misspelt option must not silently fall back to its default. */
function strict(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodObject ? withMetaOf(schema, schema.strict()) : schema;
}

const BINARY = { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } };

export function registerOp(app: OpenAPIHono<AppEnv>, kind: AnyKind, op: AnyOp): void {
  const hasBody = (op.method === "post" || op.method === "put") && !op.rawBody;
  const route = createRoute({
    method: op.method,
    path: `/v1/${kind.kind}/{id}${op.path}`,
    tags: [TAGS[kind.family]],
    operationId: `${kind.kind.replace(/-/g, "_")}_${op.name}`,
    // The price rides in the summary: a description per operation saying only that would repeat itself ~200 times.
    summary: `${op.summary} ($${op.priceMicro / 1e6})`,
    security: MANAGED_PAID,
    request: {
      params: op.params ? resourceIdParam.extend(op.params.shape) : resourceIdParam,
      ...(op.headers ? { headers: op.headers } : {}),
      // A rawBody operation's input comes from its headers: it takes no query.
      ...(hasBody
        ? { body: { required: false, content: { "application/json": { schema: strict(op.input) } } } }
        : { query: strict(op.rawBody ? noInput : op.input) as z.ZodObject }),
      ...(op.rawBody
        ? {
            body: {
              required: true,
              description: `The bytes, up to ${op.maxBodyBytes} (Content-Length required).`,
              content: BINARY,
            },
          }
        : {}),
    },
    responses: {
      200: {
        ...(op.servesObject
          ? { description: "The stored bytes (206 for a Range).", content: BINARY }
          : jsonResponse("OK", op.output)),
        ...(op.responseHeaders
          ? {
              headers: Object.fromEntries(
                Object.entries(op.responseHeaders.documented).map(([name, description]) => [
                  name,
                  { description, schema: { type: "string" as const } },
                ]),
              ),
            }
          : {}),
      },
      ...errorResponses([401, 402, 403, 404, 410, 422, ...(op.errors ?? []), ...(op.maxBodyBytes ? [413] : [])]),
    },
  });
  // The route's responses depend on the op (JSON or bytes), beyond what the typed handler can follow.
  const handler = async (c: Context<AppEnv>): Promise<Response> => {
    const { id } = resourceIdParam.parse(c.req.param());
    const input = (await opInput(c, op, hasBody)) as Json;
    const cred = managementCredential(c, id);
    const body = op.rawBody ? rawBody(c) : null;
    const stub = resourceStub(c.env, id);
    // Under an Idempotency-Key the object keeps the answer with the work: a retry whose answer was lost gets it again.
    const key = c.get("idempotency");
    const replayBytes = key ? await requestBytes(key, "operation answer", 48) : undefined;
    const replay = replayBytes && { key: toHex(replayBytes.slice(0, 16)), secret: replayBytes.slice(16) };
    const paid: PaidCall = {
      priceMicro: op.priceMicro,
      operation: `${kind.kind}.${op.name}`,
      description: `${kind.kind} ${op.name}`,
      creditFrom: "x-credit-token",
    };
    const opCall = async (payer: Payer, extra: Pick<OpInput, "peek" | "expect"> = {}) =>
      resourceAnswer(
        c,
        id,
        cred.tokenHash,
        await stub.op(
          {
            mgmtHash: cred.tokenHash,
            kind: kind.kind,
            op: op.name,
            input,
            priceMicro: op.priceMicro,
            payer,
            requestId: c.get("requestId"),
            // Not for x402: its retry signs a new payment, which the worker settles whatever the object answers.
            ...(replay && payer.type === "credit" ? { replay } : {}),
            ...extra,
          },
          body,
        ),
      );
    if (op.servesObject) return paidDownload(c, paid, opCall, (value) => op.responseHeaders?.of(value) ?? {});
    const value = await runPaid(c, paid, { run: (payer) => opCall(payer) });
    for (const [name, header] of Object.entries(op.responseHeaders?.of(value) ?? {})) c.header(name, header);
    return c.json(value as object, 200);
  };
  app.openapi(route, handler as never);
}

/** Attempts at a download whose content is replaced between the look-up and the charged call. */
const DOWNLOAD_ATTEMPTS = 3;

/**
 * A paid download is charged only once its bytes are open: the operation is first peeked (free) for
 * the object it names, the object is opened (404 or 416 here charge nothing), and only then is the
 * call paid, on the condition that it still names that object (else it rolls back, uncharged, and
 * the download starts again). The bytes stream from R2 straight to the caller.
 */
async function paidDownload(
  c: Context<AppEnv>,
  paid: PaidCall,
  opCall: (payer: Payer, extra?: Pick<OpInput, "peek" | "expect">) => Promise<Json>,
  headersOf: (value: Json) => Record<string, string>,
): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const { object_key } = (await opCall({ type: "prepaid" }, { peek: true })) as { object_key: string };
    const opened = await openObject(c, object_key);
    try {
      const value = await runPaid(c, paid, { run: (payer) => opCall(payer, { expect: { object_key } }) });
      return objectResponse(opened, headersOf(value));
    } catch (err) {
      await closeObject(opened);
      const changed = err instanceof AppError && err.code === "conflict" && err.options.extra?.changed !== undefined;
      if (!changed || attempt >= DOWNLOAD_ATTEMPTS) throw err;
    }
  }
}

/**
 * The validated input: zod-openapi has already checked each part; parsing the body again applies
 * defaults to an absent one. Path parameters and headers join it under their own names.
 */
async function opInput(c: Context<AppEnv>, op: AnyOp, hasBody: boolean): Promise<unknown> {
  const req = c.req as unknown as { valid(target: "json" | "query" | "param" | "header"): Record<string, unknown> };
  const main = hasBody
    ? (op.input.parse((req.valid("json") as unknown) ?? {}) as Record<string, unknown>)
    : req.valid("query");
  const { id: _id, ...params } = op.params ? req.valid("param") : {};
  const headers = op.headers ? req.valid("header") : {};
  const raw = op.rawBody
    ? { content_type: rawContentType(c), content_length: Number(c.req.header("content-length")) }
    : {};
  return { ...main, ...params, ...headers, ...raw };
}

/** The type of uploaded bytes: stored and served again as a header, so it must be a well-formed media type. */
function rawContentType(c: Context<AppEnv>): string {
  const type = c.req.header("content-type");
  if (type === undefined) return "application/octet-stream";
  if (!isMediaType(type)) {
    throw new AppError("validation_failed", "Content-Type must be a media type like text/plain (RFC 9110).", {
      errors: [{ path: "header.content-type", message: "is not a media type" }],
    });
  }
  return type;
}

/**
 * A rawBody operation's bytes, streamed on to the resource; the size must be declared (and the body limit checked it).
 */
function rawBody(c: Context<AppEnv>): ReadableStream<Uint8Array> {
  const length = c.req.header("content-length");
  if (!length || !/^\d+$/.test(length))
    throw new AppError("invalid_request", "Send Content-Length with the bytes (chunked uploads are not accepted).");
  // An empty body may come as no body at all; the resource stores it as an empty value.
  if (!c.req.raw.body) return new Blob([]).stream();
  return c.req.raw.body;
}

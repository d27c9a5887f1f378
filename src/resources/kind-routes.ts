/** Create and data-plane routes for every kind in the registry: no kind writes its own handlers. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { H } from "hono/types";
import type { AppEnv } from "../env";
import type { AnyKind, AnyOp, KindCard } from "../kind/kind";
import { KIND_CARDS, loadKind } from "./kinds";
import { addDefinitions, documentLater } from "../openapi/deferred";
import { serviceUrls } from "../http/urls";
import { managementCredential } from "../auth/credentials";
import { runPaid, type PaidCall, type Payer } from "../money/payment";
import { lifetimePriceMicro } from "../money/prices";
import { resourceStub } from "../stubs";
import { newPublicId } from "./public-addresses";
import { AppError, unwrap } from "../http/errors";
import { closeObject, objectResponse, openObject } from "../kind/downloads";
import { isMediaType } from "../http/header-fields";
import { commonCreateFields, createdResource, noInput, resourceIdParam, withMetaOf } from "../openapi/schemas";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { publicRecord, resourceAnswer } from "./record";
import { allowsPrivateTargets, checkEgressUrl } from "../delivery/egress-guard";
import { credentialSeed, identity, type Identity } from "./create-identity";
import { TAGS } from "../openapi/tags";
import { checkCreateTimes } from "../sandbox/create-times";
import type { Json } from "../json";
import type { CreateInput, OpInput, RecordCore } from "../rpc/resource";
import { requestBytes } from "../http/idempotency-store";
import { toHex } from "../bytes";
import { MANAGED_PAID, PAID } from "../openapi/security";

/** The values at a dotted path (`*`: every item of an array), each with the path it was found at. */
function valuesAt(value: unknown, path: string[], at: string[] = []): [string, unknown][] {
  if (path.length === 0) return [[at.join("."), value]];
  const [head, ...rest] = path as [string, ...string[]];
  if (head === "*")
    return Array.isArray(value) ? value.flatMap((item, i) => valuesAt(item, rest, [...at, String(i)])) : [];
  if (!value || typeof value !== "object" || !(head in value)) return [];
  return valuesAt((value as Record<string, unknown>)[head], rest, [...at, head]);
}

function createBody(kind: AnyKind) {
  const schema = kind.createSchema;
  if (!(schema instanceof z.ZodObject)) throw new Error(`${kind.kind}.createSchema must be a zod object`);
  const name = `Create${kind.kind.replace(/(^|-)(\w)/g, (_, _dash, ch: string) => ch.toUpperCase())}`;
  return withMetaOf(
    schema,
    schema.safeExtend(commonCreateFields(kind.defaultTtlSeconds, kind.maxTtlSeconds)).strict().openapi(name),
  );
}

function registerCreate(app: OpenAPIHono<AppEnv>, kind: AnyKind): void {
  const route = createRoute({
    method: "post",
    path: `/v1/${kind.kind}`,
    tags: [TAGS[kind.family]],
    operationId: `create_${kind.kind.replace(/-/g, "_")}`,
    summary: `Create: ${kind.summary}`,
    security: PAID,
    request: { body: { required: true, content: { "application/json": { schema: createBody(kind) } } } },
    responses: {
      201: jsonResponse("Created. `management_token` is shown this once.", createdResource),
      ...errorResponses([401, 402, 409, 413, 415, 422]),
    },
  });
  app.openapi(route, async (c) => {
    const { ttl_seconds, label, notify_url, ...config } = c.req.valid("json") as Record<string, unknown> & {
      ttl_seconds: number;
      label: string | null;
      notify_url: string | null;
    };
    const allowPrivate = allowsPrivateTargets(c.env.ALLOW_PRIVATE_TARGETS);
    if (notify_url) checkEgressUrl(notify_url, allowPrivate, "notify_url");
    for (const field of kind.targetFields ?? []) {
      for (const [path, url] of valuesAt(config, field.split(".")))
        if (typeof url === "string") checkEgressUrl(url, allowPrivate, path);
    }
    await checkCreateTimes(c, kind, config, ttl_seconds);
    const {
      config: shown,
      sealed,
      credential,
    } = kind.sealCreate
      ? await kind.sealCreate(c.env, config, await credentialSeed(c.get("idempotency")))
      : { config, sealed: null, credential: undefined };
    const priceMicro = lifetimePriceMicro(kind, ttl_seconds);
    const call = {
      priceMicro,
      operation: `${kind.kind}.create`,
      description: `Create a ${kind.kind} resource for ${ttl_seconds} s`,
      creditFrom: "bearer" as const,
    };
    let made: Identity | undefined;
    const core = await runPaid<RecordCore>(c, call, {
      run: async (payer, owner) => {
        // Paid by credit, a create under an Idempotency-Key takes its token and secrets from the key (and its
        // credential, above), so a retry whose answer was lost finds the resource and shows what it holds.
        const key = payer.type === "credit" ? c.get("idempotency") : undefined;
        const keyed =
          key && payer.type === "credit" ? { key, accountId: payer.accountId, operation: call.operation } : undefined;
        made = await identity(c, Boolean(notify_url || kind.sends), keyed);
        const publicId =
          kind.public && (kind.public.enabled?.(config) ?? true) ? newPublicId(kind.kind, made.id) : null;
        const input: CreateInput = {
          id: made.id,
          kind: kind.kind,
          owner,
          mgmtHash: made.mgmt.hash,
          label,
          notifyUrl: notify_url,
          sealedSecret: made.sealedSecret,
          publicId,
          baseUrl: serviceUrls(c).baseUrl,
          configJson: JSON.stringify(shown),
          sealedJson: JSON.stringify(sealed),
          ttlSeconds: ttl_seconds,
          priceMicro,
          payer,
          requestId: c.get("requestId"),
        };
        return unwrap(await resourceStub(c.env, made.id).create(input));
      },
      undo: async () => void (made && (await resourceStub(c.env, made.id).cancel(made.mgmt.hash))),
      settled: async () => void (made && unwrap(await resourceStub(c.env, made.id).settledCreate(c.get("requestId")))),
    });
    const signing = made?.signingSecret ? { signing_secret: made.signingSecret } : {};
    return c.json(
      {
        ...publicRecord(c, core),
        management_token: made!.mgmt.token,
        ...signing,
        ...(credential ? { credential } : {}),
      },
      201,
    );
  });
}

/** An unknown field is refused (422), not ignored: a misspelt option must not silently fall back to its default. */
function strict(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodObject ? withMetaOf(schema, schema.strict()) : schema;
}

const BINARY = { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } };

function registerOp(app: OpenAPIHono<AppEnv>, kind: AnyKind, op: AnyOp): void {
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

/**
 * The documented paths each kind's own `routes` added (the notary's /v1/tsa/…), so its slice of the document keeps
 * them.
 */
const ownPaths = new Map<string, string[]>();
export const ownPathsOf = (kind: AnyKind): string[] => ownPaths.get(kind.kind) ?? [];

/**
 * A kind's routes as app.openapi would have registered them: each route's handlers (validators, then the handler) and
 * its OpenAPI entries.
 */
interface BuiltRoutes {
  chains: Map<string, H[]>;
  definitions: OpenAPIHono<AppEnv>["openAPIRegistry"]["definitions"];
}

const honoPath = (path: string) => path.replaceAll(/\/{(.+?)}/g, "/:$1");

/**
 * Registers every kind's routes (its own first: a fixed path such as /v1/notify/channels must win over
 * /v1/{kind}/{id}; then its create and its operations), each with its method and path from the kind
 * manifest and a handler that builds the kind's routes when one of them is first called: the kind's module
 * loaded, its schemas derived, its validators made and its OpenAPI entries written, on a scratch app with
 * the same hook, by the same code as before. The request then runs the route's own handlers on its own
 * context, so routing, middleware and answers are what they were. The OpenAPI entries join the document,
 * where they were declared, when it is first built (openapi/deferred.ts).
 */
export function registerKindRoutes(app: OpenAPIHono<AppEnv>): void {
  const built = new Map<string, Promise<BuiltRoutes>>();
  const build = (card: KindCard) => {
    let routes = built.get(card.kind);
    if (!routes) built.set(card.kind, (routes = loadKind(card.kind).then((kind) => buildRoutes(app, kind))));
    return routes;
  };
  for (const card of KIND_CARDS) {
    const routes = [
      ...card.ownRoutes,
      { method: "post" as const, path: `/v1/${card.kind}` },
      ...card.ops.map((op) => ({ method: op.method, path: `/v1/${card.kind}/{id}${op.path}` })),
    ];
    for (const { method, path } of routes) {
      const key = `${method.toUpperCase()} ${honoPath(path)}`;
      let chain: H[] | undefined;
      // One parameter: a handler, not a middleware (operator/request-facts.ts names the route by the first handler).
      app.on(method.toUpperCase(), honoPath(path), async (c: Context<AppEnv>) => {
        chain ??= (await build(card)).chains.get(key);
        if (!chain) throw new Error(`${card.kind}: the manifest's route ${key} is not the kind's (npm run manifests)`);
        return runChain(c, chain);
      });
    }
  }
  documentLater(app, async (registry) => {
    for (const card of KIND_CARDS) addDefinitions(registry, (await build(card)).definitions);
  });
}

function buildRoutes(app: OpenAPIHono<AppEnv>, kind: AnyKind): BuiltRoutes {
  const scratch = new OpenAPIHono<AppEnv>({ defaultHook: app.defaultHook });
  kind.routes?.(scratch);
  ownPaths.set(
    kind.kind,
    scratch.openAPIRegistry.definitions.flatMap((d) => (d.type === "route" ? [d.route.path] : [])),
  );
  registerCreate(scratch, kind);
  for (const op of kind.ops) registerOp(scratch, kind, op);
  const chains = new Map<string, H[]>();
  for (const route of scratch.routes) {
    const key = `${route.method} ${route.path}`;
    chains.set(key, [...(chains.get(key) ?? []), route.handler]);
  }
  return { chains, definitions: scratch.openAPIRegistry.definitions };
}

/**
 * Runs one route's handlers on the request's context as Hono's compose would: each middleware's `next` is the
 * one after it, an answer returned becomes the response, and an error goes up to the app's onError.
 */
async function runChain(c: Context<AppEnv>, chain: H[]): Promise<Response> {
  const step = async (i: number): Promise<void> => {
    const res: unknown = await chain[i]!(c, () => step(i + 1));
    if (res instanceof Response && !c.finalized) c.res = res;
  };
  await step(0);
  return c.res;
}

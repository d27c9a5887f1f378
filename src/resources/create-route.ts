/** A kind's create route (POST /v1/{kind}), built from its schema: validated, priced, paid, made by its object. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import type { AnyKind } from "../kind/kind";
import { serviceUrls } from "../http/urls";
import { runPaid } from "../money/payment";
import { lifetimePriceMicro } from "../money/prices";
import { resourceStub } from "../stubs";
import { newPublicId } from "./public-addresses";
import { unwrap } from "../http/errors";
import { commonCreateFields, createdResource, withMetaOf } from "../openapi/schemas";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { publicRecord } from "./record";
import { allowsPrivateTargets, checkEgressUrl } from "../delivery/egress-guard";
import { credentialSeed, identity, type Identity } from "./create-identity";
import { TAGS } from "../openapi/tags";
import { checkCreateTimes } from "../sandbox/create-times";
import type { CreateInput, RecordCore } from "../rpc/resource";
import { PAID } from "../openapi/security";

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

export function registerCreate(app: OpenAPIHono<AppEnv>, kind: AnyKind): void {
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

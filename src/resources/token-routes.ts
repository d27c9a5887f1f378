/**
 * Narrowed management tokens (docs/api.md#narrowed-management-tokens): made, listed and revoked with a
 * management token of the resource. The new token is minted here, in the usual zvm_ format, and shown
 * once; its object keeps only its SHA-256 and its limits (durable-objects/resource/grants.ts).
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { managementCredential } from "../auth/credentials";
import { issueManagementTokenFor } from "../auth/tokens";
import { randomId } from "../auth/ids";
import { resourceStub } from "../stubs";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { MANAGED } from "../openapi/security";
import { pageLimit, resourceIdParam, rfc3339, seqCursor, singleLine } from "../openapi/schemas";
import { resourceAnswer } from "./record";
import { READ_ONLY } from "./token-limits";

const MANAGE = { tags: ["Manage"], security: MANAGED };
const REFUSED = [401, 403, 404, 410, 422];

const operationName = z
  .string()
  .regex(
    /^[a-z][a-z_-]{0,63}$/,
    "must be an operation name (its kind's, as in describe_kind), a management call's operationId, or read-only",
  );

/** A key prefix: printable, one line (it is compared with keys as given). */
const keyPrefix = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, "must not contain control characters");

const mintBody = z
  .object({
    operations: z
      .array(operationName)
      .min(1)
      .max(100)
      .optional()
      .describe(
        `What it may call: the kind's operation names (\`get\`, \`put\`), \`${READ_ONLY}\` (every GET ` +
          `operation and list_deliveries), ` +
          "and by name `extend_resource`, `export_resource`, `cancel_resource`, `list_deliveries`, " +
          "`retry_delivery`. Absent: what its parent may (a token made by the resource's own may then call " +
          "all but extend, export and cancel). `get_resource` and its own tokens are always open to it.",
      ),
    expires_at: rfc3339
      .refine((at) => Date.parse(at) > 0, "must be after 1970-01-01T00:00:00Z")
      .optional()
      .describe(
        "When it stops working: in the future, and no later than the resource's expires_at (or its " +
          "parent's). Absent: its parent's (or the resource's end).",
      ),
    max_paid_calls: z
      .int()
      .min(1)
      .max(1_000_000_000)
      .optional()
      .describe("How many paid calls it (and every token made from it) may make; no more than its parent has left."),
    key_prefixes: z
      .array(keyPrefix)
      .min(1)
      .max(20)
      .optional()
      .describe(
        "For kinds with keys (vaults' keys, idempotency's keys, checkpoints' threads): the keys it reaches " +
          "start with one of these; each under one of its parent's.",
      ),
    label: singleLine(200).optional().describe("Your note of who holds it."),
  })
  .strict()
  .openapi("NarrowTokenRequest");

const tokenView = z
  .object({
    token_id: z.string().describe("Names it in the list and to revoke; not a credential."),
    parent_token_id: z
      .string()
      .nullable()
      .describe("The narrowed token it was made from; null when the resource's own made it."),
    label: z.string().nullable(),
    operations: z
      .array(z.string())
      .nullable()
      .describe("What it may call (read-only expanded); null: all but extend, export and cancel."),
    expires_at: z.string().nullable().describe("null: until the resource ends."),
    max_paid_calls: z.int().nullable(),
    paid_calls: z.int().describe("Paid calls made with it and with the tokens made from it."),
    key_prefixes: z.array(z.string()).nullable(),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
  })
  .openapi("ManagementTokenRecord");

const minted = tokenView
  .extend({
    management_token: z.string().describe("The new token (zvm_…), shown this once: only its SHA-256 is kept."),
  })
  .openapi("NarrowedManagementToken");

const tokenPage = z
  .object({ items: z.array(tokenView), next_cursor: z.string().nullable() })
  .openapi("ManagementTokenPage");

const tokenIdParam = resourceIdParam.extend({
  token_id: z
    .string()
    .regex(/^tok_[0-9A-Za-z]{22}$/, "must be a token_id (tok_…)")
    .openapi({ param: { name: "token_id", in: "path" }, example: "tok_4Hq9ZbT2mXw7Lr1Pc8Vd3e" }),
});

const revoked = z
  .object({
    token_id: z.string(),
    revoked: z.array(z.string()).describe("It and every token made from it, as revoked now."),
  })
  .openapi("RevokedTokens");

const example = {
  operations: ["get", "list"],
  expires_at: "2026-12-01T00:00:00Z",
  max_paid_calls: 500,
  key_prefixes: ["agents/alice/"],
  label: "research sub-agent",
};

export function registerTokenRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/resources/{id}/tokens",
      operationId: "narrow_token",
      summary: "Make a narrower management token for this resource (free)",
      ...MANAGE,
      description:
        "With the resource's management token or a narrowed one: the new token may do no more than the one " +
        "that makes it (asking for more is 403 `token_widening`). Each call outside its limits is a 403 " +
        "naming the limit.",
      request: {
        params: resourceIdParam,
        body: { required: true, content: { "application/json": { schema: mintBody, example } } },
      },
      responses: {
        201: jsonResponse("Made. `management_token` is shown this once.", minted),
        ...errorResponses([...REFUSED, 507]),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const body = c.req.valid("json");
      const cred = managementCredential(c, id);
      const made = issueManagementTokenFor(id);
      const asked = {
        ...(body.operations ? { operations: body.operations } : {}),
        ...(body.expires_at ? { expiresAt: Date.parse(body.expires_at) } : {}),
        ...(body.max_paid_calls ? { maxPaidCalls: body.max_paid_calls } : {}),
        ...(body.key_prefixes ? { keyPrefixes: body.key_prefixes } : {}),
      };
      const input = {
        mgmtHash: cred.tokenHash,
        tokenId: randomId("tok_"),
        tokenHash: made.hash,
        label: body.label ?? null,
        asked,
      };
      const view = await resourceAnswer(c, id, cred.tokenHash, await resourceStub(c.env, id).mintToken(input));
      return c.json({ ...view, management_token: made.token }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/resources/{id}/tokens",
      operationId: "list_tokens",
      summary: "Narrowed tokens of this resource (free)",
      ...MANAGE,
      description:
        "The resource's own token sees every one; a narrowed token, those made from it (and from them). " +
        "Revoked ones stay listed.",
      request: { params: resourceIdParam, query: z.object({ limit: pageLimit(), cursor: seqCursor }) },
      responses: { 200: jsonResponse("Oldest first.", tokenPage), ...errorResponses(REFUSED) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const { limit, cursor } = c.req.valid("query");
      const cred = managementCredential(c, id);
      const page = await resourceAnswer(
        c,
        id,
        cred.tokenHash,
        await resourceStub(c.env, id).listTokens({ mgmtHash: cred.tokenHash, limit, cursor: cursor ?? null }),
      );
      return c.json(page, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/resources/{id}/tokens/{token_id}",
      operationId: "revoke_token",
      summary: "Revoke a narrowed token and every token made from it (free)",
      ...MANAGE,
      description: "With the resource's own token, any; with a narrowed one, itself or a token made from it.",
      request: { params: tokenIdParam },
      responses: { 200: jsonResponse("What was revoked.", revoked), ...errorResponses(REFUSED) },
    }),
    async (c) => {
      const { id, token_id } = c.req.valid("param");
      const cred = managementCredential(c, id);
      return c.json(
        await resourceAnswer(
          c,
          id,
          cred.tokenHash,
          await resourceStub(c.env, id).revokeToken({ mgmtHash: cred.tokenHash, tokenId: token_id }),
        ),
        200,
      );
    },
  );
}

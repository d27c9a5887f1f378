/**
 * Receipts: the statement of charges of the presented token (and of its
 * sub-tokens), signed as a compact JWS with the service's key, so an agent can
 * hand its operator a statement anyone can check against the JWKS.
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { CompactSign } from "jose";
import type { AppEnv } from "../env";
import { AppError, unwrap } from "../http/errors";
import { requireCredit } from "../auth/credentials";
import { SIGNING_ALG, signingKeys } from "../auth/signing-keys";
import { accountStub } from "../stubs";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { CREDIT } from "../openapi/security";
import { rfc3339 } from "../openapi/schemas";
import { microToUsd } from "./amounts";
import type { LedgerRow } from "../rpc/account";

const query = z.object({
  since: rfc3339
    .optional()
    .openapi({ example: "2026-11-01T00:00:00Z" })
    .describe("Start of the period (inclusive); default: the beginning."),
  until: rfc3339.optional().describe("End of the period (exclusive); default: now."),
});

const charge = z.object({
  at: z.string(),
  operation: z.string(),
  resource_id: z.string().nullable(),
  amount_usd: z.number(),
  request_id: z.string(),
});

const statement = z
  .object({
    token_id: z.string(),
    period: z.object({ since: z.string(), until: z.string() }),
    charges: z.array(charge),
    total_usd: z.number(),
    balance_usd: z.number(),
    issued_at: z.string(),
  })
  .openapi("Statement");

const receipt = z
  .object({
    statement,
    signature: z.string().describe("Compact JWS (RS256, `kid` in the JWKS) whose payload is the statement's JSON."),
  })
  .openapi("Receipt");

/** Charges that stand: a refunded charge (a call that failed after it was taken) is left out with its refund. */
function standingCharges(rows: LedgerRow[]): LedgerRow[] {
  const refunded = new Set(rows.filter((r) => r.type === "refund").map((r) => Number(r.ref)));
  return rows.filter((r) => r.type === "charge" && !refunded.has(r.seq));
}

export function registerReceiptRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/receipts",
      tags: ["Money"],
      operationId: "get_receipts",
      security: CREDIT,
      summary: "Signed statement of charges (free)",
      description:
        "Charges of the presented token and its sub-tokens over a period, with the balance, signed as a " +
        "compact JWS verifiable against `/.well-known/jwks.json`.",
      request: { query },
      responses: { 200: jsonResponse("The statement and its signature.", receipt), ...errorResponses([401, 422]) },
    }),
    async (c) => {
      const cred = await requireCredit(c);
      const { since, until } = c.req.valid("query");
      const from = since ? Date.parse(since) : 0;
      const to = until ? Date.parse(until) : Date.now();
      if (to <= from)
        throw new AppError("validation_failed", "until must be after since.", {
          errors: [{ path: "until", message: "must be after since" }],
        });

      const { rows, view } = unwrap(
        await accountStub(c.env, cred.accountId).statement({
          tokenId: cred.tokenId,
          tokenHash: cred.tokenHash,
          since: from,
          until: to,
        }),
      );
      const charges = standingCharges(rows).map((r) => ({
        at: new Date(r.at).toISOString(),
        operation: r.operation,
        resource_id: r.resource_id,
        amount_usd: microToUsd(r.amount),
        request_id: r.request_id,
      }));
      const body = {
        token_id: cred.tokenId,
        period: { since: new Date(from).toISOString(), until: new Date(to).toISOString() },
        charges,
        total_usd: microToUsd(standingCharges(rows).reduce((sum, r) => sum + r.amount, 0)),
        balance_usd: microToUsd(view.balance),
        issued_at: new Date().toISOString(),
      };
      const { current } = await signingKeys(c.env);
      const signature = await new CompactSign(new TextEncoder().encode(JSON.stringify(body)))
        .setProtectedHeader({ alg: SIGNING_ALG, kid: current.kid, typ: "statement+json" })
        .sign(current.privateKey);
      return c.json({ statement: body, signature }, 200);
    },
  );
}

/** Money: buy and top up credits with x402, balance, sub-tokens, the price list (docs/api.md#money-endpoints). */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { AppError, unwrap } from "../http/errors";
import { bearer, creditCredential, requireCredit } from "../auth/credentials";
import { issueCreditToken } from "../auth/tokens";
import { accountStub } from "../stubs";
import { microToUsd, usdToMicro } from "./amounts";
import { runPaid } from "./payment";
import { priceList } from "./prices";
import { balance, prices, purchaseBody, purchased, subtoken, subtokenBody, topUp } from "./schemas";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { CREDIT, PURCHASE } from "../openapi/security";
import type { BalanceView } from "../rpc/account";
import { DELIVERY_RETENTION } from "../delivery/outbox-policy";
import { egressIps } from "../delivery/connect-proxy";
import { iso } from "../time";

const DAY_MS = 86400 * 1000;
const MONEY = { tags: ["Money"] };

function balanceBody(v: BalanceView) {
  return {
    token_id: v.token_id,
    type: v.type,
    balance_usd: microToUsd(v.balance),
    spent_usd: microToUsd(v.spent),
    cap_usd: v.cap === null ? null : microToUsd(v.cap),
    cap_remaining_usd: v.cap_remaining === null ? null : microToUsd(v.cap_remaining),
    expires_at: iso(v.expires_at),
  };
}

function checkPurchase(c: Context<AppEnv>, amountUsd: number): number {
  const amount = usdToMicro(amountUsd);
  const min = usdToMicro(Number(c.env.MIN_PURCHASE_USD));
  const max = usdToMicro(Number(c.env.MAX_PURCHASE_USD));
  if (amount < min || amount > max) {
    throw new AppError(
      "validation_failed",
      `amount_usd must be between ${c.env.MIN_PURCHASE_USD} and ${c.env.MAX_PURCHASE_USD}.`,
      {
        errors: [
          { path: "amount_usd", message: `must be between ${c.env.MIN_PURCHASE_USD} and ${c.env.MAX_PURCHASE_USD}` },
        ],
      },
    );
  }
  return amount;
}

export function registerMoneyRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/credits",
      operationId: "buy_credits",
      ...MONEY,
      summary: "Buy a prepaid credit token with x402, or top one up",
      description:
        "Pay exactly `amount_usd` with `X-PAYMENT` (x402 v1) or `PAYMENT-SIGNATURE` (v2). Without payment " +
        "the 402 names the terms. With `Authorization: Bearer zv_…` as well, that token is topped up " +
        "instead (200).",
      security: PURCHASE,
      request: {
        body: { required: true, content: { "application/json": { schema: purchaseBody, example: { amount_usd: 5 } } } },
      },
      responses: {
        201: jsonResponse("A new credit token, shown once.", purchased),
        200: jsonResponse("Topped up.", topUp),
        ...errorResponses([401, 402, 409, 422, 502]),
      },
    }),
    async (c) => {
      const amount = checkPurchase(c, c.req.valid("json").amount_usd);
      const requestId = c.get("requestId");
      const expiresAt = Date.now() + Number(c.env.CREDIT_TOKEN_DAYS) * DAY_MS;
      const call = {
        priceMicro: amount,
        operation: "credits.purchase",
        description: `Buy $${microToUsd(amount)} of credits`,
        creditFrom: null,
      };
      const existing = bearer(c);
      if (existing) {
        const cred = await creditCredential(c, existing);
        const account = accountStub(c.env, cred.accountId);
        const ref = `topup:${requestId}`;
        const view = await runPaid(c, call, {
          run: async () =>
            unwrap(
              await account.topUp({
                tokenId: cred.tokenId,
                tokenHash: cred.tokenHash,
                amount,
                ref,
                requestId,
                expiresAt,
              }),
            ),
          undo: async () => account.revertTopUp({ ref }),
        });
        return c.json(
          { token_id: view.token_id, balance_usd: microToUsd(view.balance), expires_at: iso(view.expires_at) },
          200,
        );
      }
      const issued = issueCreditToken();
      const { accountId, tokenId } = issued.parts;
      const account = accountStub(c.env, accountId);
      const view = await runPaid(c, call, {
        run: async (_payer, owner) => {
          const root = {
            token_id: tokenId,
            token_hash: issued.hash,
            label: null,
            created_at: Date.now(),
            expires_at: expiresAt,
          };
          const opened = unwrap(await account.open({ root, amount, ref: `x402:${owner}`, requestId }));
          await c.env.DB.prepare(
            "INSERT INTO credit_tokens (token_id, account_id, parent_id, token_hash, label, created_at, " +
              "expires_at) VALUES (?, ?, NULL, ?, NULL, ?, ?)",
          )
            .bind(tokenId, accountId, issued.hash, root.created_at, expiresAt)
            .run();
          return opened;
        },
        undo: async () => {
          await account.void();
          await c.env.DB.prepare("DELETE FROM credit_tokens WHERE token_id = ?").bind(tokenId).run();
        },
      });
      return c.json(
        {
          credit_token: issued.token,
          token_id: tokenId,
          balance_usd: microToUsd(view.balance),
          expires_at: iso(view.expires_at),
        },
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/credits/balance",
      operationId: "get_balance",
      ...MONEY,
      summary: "Balance of the presented credit token",
      security: CREDIT,
      responses: { 200: jsonResponse("Balance.", balance), ...errorResponses([401]) },
    }),
    async (c) => {
      const cred = await requireCredit(c);
      return c.json(balanceBody(unwrap(await accountStub(c.env, cred.accountId).balance(cred))), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/credits/subtokens",
      operationId: "create_subtoken",
      ...MONEY,
      summary: "Mint a spend-capped child token",
      description:
        "The child spends its root's balance, never beyond `cap_usd`, never past its parent's expiry. A " +
        "sub-token may mint a smaller one.",
      security: CREDIT,
      request: {
        body: {
          required: true,
          content: {
            "application/json": { schema: subtokenBody, example: { cap_usd: 1, label: "nightly crawler", days: 7 } },
          },
        },
      },
      responses: { 201: jsonResponse("The sub-token, shown once.", subtoken), ...errorResponses([401, 422]) },
    }),
    async (c) => {
      const cred = await requireCredit(c);
      const body = c.req.valid("json");
      const issued = issueCreditToken(cred.accountId);
      const now = Date.now();
      const child = {
        token_id: issued.parts.tokenId,
        token_hash: issued.hash,
        label: body.label,
        cap: usdToMicro(body.cap_usd),
        created_at: now,
        expires_at: now + body.days * DAY_MS,
      };
      const view = unwrap(
        await accountStub(c.env, cred.accountId).mintSubtoken({
          tokenId: cred.tokenId,
          tokenHash: cred.tokenHash,
          child,
          requestId: c.get("requestId"),
        }),
      );
      await c.env.DB.prepare(
        "INSERT INTO credit_tokens (token_id, account_id, parent_id, token_hash, label, created_at, " +
          "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      )
        .bind(view.token_id, cred.accountId, cred.tokenId, issued.hash, body.label, now, view.expires_at)
        .run();
      return c.json(
        {
          credit_token: issued.token,
          token_id: view.token_id,
          cap_usd: body.cap_usd,
          label: body.label,
          expires_at: iso(view.expires_at),
          parent_token_id: cred.tokenId,
        },
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/prices",
      operationId: "list_prices",
      ...MONEY,
      summary: "Machine-readable price list (free, no credential)",
      security: [],
      responses: { 200: jsonResponse("Every priced operation.", prices), ...errorResponses([]) },
    }),
    (c) =>
      c.json(
        {
          currency: "USD" as const,
          operations: priceList(),
          limits: { deliveries: DELIVERY_RETENTION },
          egress: { ips: egressIps(c.env) },
        },
        200,
      ),
  );
}

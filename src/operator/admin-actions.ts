/**
 * What the operator does about a complaint or an incident (docs/operations.md): give back what one
 * call was charged, list the deliveries that died, and send one again after an outage of its own.
 * Behind the /v1/admin/* guard (ask/admin.ts). Money only ever goes back to the token that paid,
 * through its account's ledger, so receipts and balances agree with what the operator did.
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { AppError, unwrap } from "../http/errors";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { pageLimit } from "../openapi/schemas";
import { accountStub, resourceStub } from "../stubs";
import { microToUsd } from "../money/amounts";
import { ADMIN, ADMIN_ERRORS } from "../ask/admin";
import { decodeCursor, encodeCursor } from "../ask/cursor";

const OPERATOR = { ...ADMIN, tags: ["Operator"] };
const TOKEN_ID = /^acct_[0-9A-Za-z]{1,40}(\.[0-9A-Za-z]{1,40})?$/;

const refundBody = z
  .object({
    token_id: z
      .string()
      .regex(TOKEN_ID, "a credit token id (acct_…, or acct_….… for a sub-token)")
      .describe("The token that paid: `token_id` of its balance or receipts."),
    request_id: z
      .string()
      .regex(/^req_[0-9A-Za-z_-]{1,80}$/, "a request id (req_…)")
      .describe("The call to give back: its `X-Request-Id`, as its receipt lists it."),
    reason: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .describe("Why, for the operator's own records (not shown to the customer)."),
  })
  .strict()
  .openapi("OperatorRefund");

const refundAnswer = z
  .object({
    token_id: z.string(),
    request_id: z.string(),
    refunded_usd: z
      .number()
      .describe(
        "Given back by this call: 0 when every charge of that request was given back already (the call is idempotent).",
      ),
    charges: z.int().describe("How many charges of that request this call gave back."),
    balance_usd: z.number().describe("The token's balance afterwards."),
  })
  .openapi("OperatorRefundResult");

const deadQuery = z.object({
  limit: pageLimit(),
  cursor: z
    .string()
    .max(200)
    .optional()
    .describe("`next_cursor` of the previous page; absent for the first (newest deaths first)."),
});
const deadDelivery = z.object({
  delivery_id: z.string(),
  resource_id: z.string(),
  kind: z
    .string()
    .nullable()
    .describe("The resource's kind, from the resource index (null once its tombstone is gone)."),
  died_at: z.string(),
});
const deadPage = z
  .object({ items: z.array(deadDelivery), next_cursor: z.string().nullable() })
  .openapi("DeadDeliveryPage");
const deliveryParam = z.object({
  delivery_id: z
    .string()
    .regex(/^[0-9A-Za-z_-]{1,100}$/)
    .describe("The delivery's `webhook-id`.")
    .openapi({ param: { name: "delivery_id", in: "path" }, example: "evt_3f9c2a7e5b1d4c8a9e6f0b2d4a6c8e0f" }),
});

type DeadRow = { delivery_id: string; resource_id: string; kind: string | null; at: number };

export function registerAdminActions(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/admin/refunds",
      operationId: "admin_refund_call",
      ...OPERATOR,
      summary: "Operator: give back what one call was charged",
      description:
        "Every charge the call (`request_id`) made to the token or its sub-tokens goes back to the " +
        "balance, and leaves its receipt. x402 payments are on chain: send those back from the pay-to " +
        "wallet.",
      request: {
        body: {
          required: true,
          content: {
            "application/json": {
              schema: refundBody,
              example: {
                token_id: "acct_4Bz9qT2mXw",
                request_id: "req_0Hk3f9",
                reason: "Charged for a render the engine lost.",
              },
            },
          },
        },
      },
      responses: {
        200: jsonResponse("What was given back.", refundAnswer),
        ...errorResponses([...ADMIN_ERRORS, 413, 415]),
      },
    }),
    async (c) => {
      const { token_id, request_id, reason } = c.req.valid("json");
      const accountId = token_id.split(".")[0]!;
      const out = unwrap(
        await accountStub(c.env, accountId).refundCall({
          tokenId: token_id,
          callRequestId: request_id,
          requestId: c.get("requestId"),
        }),
      );
      // The reason stays in the operator's log, beside the request id that did it.
      console.log(
        JSON.stringify({
          event: "operator.refund",
          request_id: c.get("requestId"),
          token_id,
          call: request_id,
          refunded_micro: out.refunded,
          reason,
        }),
      );
      return c.json(
        {
          token_id,
          request_id,
          refunded_usd: microToUsd(out.refunded),
          charges: out.charges,
          balance_usd: microToUsd(out.view.balance),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/admin/deliveries/dead",
      operationId: "admin_list_dead_deliveries",
      ...OPERATOR,
      summary: "Operator: deliveries that died, newest first",
      request: { query: deadQuery },
      responses: { 200: jsonResponse("A page of dead deliveries.", deadPage), ...errorResponses(ADMIN_ERRORS) },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      const after = cursor ? decodeCursor(cursor) : { createdAt: Number.MAX_SAFE_INTEGER, id: "" };
      const rows = (
        await c.env.DB.prepare(
          `SELECT d.delivery_id, d.resource_id, r.kind, d.at
         FROM deliveries_dead d LEFT JOIN resources r ON r.id = d.resource_id
         WHERE d.at < ?1 OR (d.at = ?1 AND d.delivery_id < ?2) ORDER BY d.at DESC, d.delivery_id DESC LIMIT ?3`,
        )
          .bind(after.createdAt, after.id || "\uffff", limit + 1)
          .all<DeadRow>()
      ).results;
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return c.json(
        {
          items: page.map((r) => ({
            delivery_id: r.delivery_id,
            resource_id: r.resource_id,
            kind: r.kind,
            died_at: new Date(r.at).toISOString(),
          })),
          next_cursor: rows.length > limit && last ? encodeCursor({ createdAt: last.at, id: last.delivery_id }) : null,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/admin/deliveries/{delivery_id}/retry",
      operationId: "admin_retry_delivery",
      ...OPERATOR,
      summary: "Operator: send a dead delivery again",
      description:
        "For an outage on the service's side: the delivery is queued again as its owner's manual retry " +
        "would queue it, signed with the resource's secret. The resource must still be active.",
      request: { params: deliveryParam },
      responses: {
        200: jsonResponse("The delivery as its log shows it now.", z.record(z.string(), z.unknown())),
        ...errorResponses([...ADMIN_ERRORS, 410]),
      },
    }),
    async (c) => {
      const { delivery_id } = c.req.valid("param");
      const row = await c.env.DB.prepare("SELECT resource_id FROM deliveries_dead WHERE delivery_id = ?")
        .bind(delivery_id)
        .first<{ resource_id: string }>();
      if (!row)
        throw new AppError("not_found", `No dead delivery ${delivery_id}: GET /v1/admin/deliveries/dead lists them.`);
      return c.json(
        unwrap(await resourceStub(c.env, row.resource_id).operatorRetryDelivery(delivery_id)) as Record<
          string,
          unknown
        >,
        200,
      );
    },
  );
}

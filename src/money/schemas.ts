/**
 * The bodies of the money endpoints (money/routes.ts), validated by these schemas and published
 * under these names in the OpenAPI document.
 */
import { z } from "@hono/zod-openapi";
import { usdAmount } from "./amounts";
import { singleLine } from "../openapi/schemas";

export const purchaseBody = z
  .object({ amount_usd: usdAmount.describe("Dollars to buy; at least MIN_PURCHASE_USD (0.25).") })
  .strict()
  .openapi("CreditPurchase");
export const purchased = z
  .object({
    credit_token: z.string().describe("zv_… — shown this once."),
    token_id: z.string(),
    balance_usd: z.number(),
    expires_at: z.string(),
  })
  .openapi("CreditToken");
export const topUp = purchased.omit({ credit_token: true }).openapi("CreditTopUp");
export const balance = z
  .object({
    token_id: z.string(),
    type: z.enum(["credit", "subtoken"]),
    balance_usd: z.number().describe("What this token can spend now."),
    spent_usd: z.number(),
    cap_usd: z.number().nullable(),
    cap_remaining_usd: z.number().nullable(),
    expires_at: z.string(),
  })
  .openapi("CreditBalance");
export const subtokenBody = z
  .object({ cap_usd: usdAmount, label: singleLine(200).nullable().default(null), days: z.int().min(1).max(3650) })
  .strict()
  .openapi("SubtokenRequest");
export const subtoken = z
  .object({
    credit_token: z.string(),
    token_id: z.string(),
    cap_usd: z.number(),
    label: z.string().nullable(),
    expires_at: z.string(),
    parent_token_id: z.string(),
  })
  .openapi("Subtoken");
export const prices = z
  .object({
    currency: z.literal("USD"),
    operations: z.array(
      z.object({
        operation: z.string(),
        method: z.string(),
        path: z.string(),
        price_usd: z.number(),
        unit: z.enum(["call", "day", "mb"]),
        default_ttl_seconds: z.int().nullable(),
        max_ttl_seconds: z.int().nullable(),
        limits: z
          .record(z.string(), z.number())
          .optional()
          .describe("On a create line: the kind's limits; beyond them a request is refused with 413 or 422."),
      }),
    ),
    limits: z
      .object({
        deliveries: z.object({
          settled_kept: z
            .int()
            .describe("Settled (delivered, aborted, dead) deliveries each resource's log keeps, newest first."),
          settled_days: z.int().describe("Days a settled delivery stays in the log."),
          attempts_kept: z.int().describe("Attempts each delivery keeps in its attempt log, newest first."),
        }),
      })
      .describe("Limits every resource shares."),
    egress: z.object({
      ips: z
        .array(z.string())
        .describe(
          "The fixed addresses egress-connectors' requests leave from (empty when the operator configured " +
            "no egress proxy): allowlist these at the target.",
        ),
    }),
  })
  .openapi("PriceList");

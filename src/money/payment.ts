/**
 * Pays for one call, exactly once, from whichever credential came with it:
 * a credit token (charged inside the Durable Object doing the work, so a
 * refused call is never charged) or a per-call x402 payment (verified and
 * claimed before the work, settled after it, released if the work fails).
 * A call with neither gets 402 with the exact price of that call, unless the
 * anonymous free tier (http/free-tier.ts) covers it. A paid call leaves what
 * it was charged on the context (`charged`) for the request log and the
 * operator's figures (operator/request-log.ts).
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { AppError } from "../http/errors";
import { bearer, creditCredential, type CreditCredential } from "../auth/credentials";
import { chainConfig, encodeHeader, paymentError, type PaymentTerms } from "./x402/terms";
import { claimPayment, recordSettlement, releasePayment, type ClaimKey } from "./x402/claims";
import { claimFreeCall } from "../http/free-tier";
import { microToUsd } from "./amounts";

/**
 * Who pays, as handed to a Durable Object: a credit token to charge, or paid outside it (the free tier, or
 * `x402`: a payment the worker settles once the work is done, so a create stays written down until then).
 */
export type Payer = ({ type: "credit" } & CreditCredential) | { type: "prepaid"; x402?: true };

export interface PaidCall {
  priceMicro: number;
  operation: string;
  description: string;
  /**
   * Where a credit token may come from: the bearer (creates), X-CREDIT-TOKEN (beside a management token), or nowhere
   * (purchases).
   */
  creditFrom: "bearer" | "x-credit-token" | null;
}

export interface PaidWork<T> {
  /** Does the work. `owner` is the credit token id or the x402 payer address. */
  run(payer: Payer, owner: string): Promise<T>;
  /** Reverses the work if the x402 payment behind it cannot be settled. */
  undo?(value: T): Promise<void>;
  /** Told once the x402 payment behind the work is settled (a create crosses its pending creation off). */
  settled?(value: T): Promise<void>;
}

const PAYMENT_CODES = new Set(["payment_required", "insufficient_balance", "cap_exceeded", "payment_invalid"]);

function paymentTerms(c: Context<AppEnv>, call: PaidCall): PaymentTerms {
  return {
    priceMicro: call.priceMicro,
    resourceUrl: c.req.url,
    description: call.description,
    chain: chainConfig(c.env),
  };
}

/** A 402 from anywhere (e.g. the AccountObject) gains the x402 terms of this call. */
function withTerms(err: unknown, terms: PaymentTerms): unknown {
  if (err instanceof AppError && PAYMENT_CODES.has(err.code) && !err.options.headers)
    return paymentError(err.code, err.detail, terms);
  return err;
}

async function creditFromRequest(c: Context<AppEnv>, from: PaidCall["creditFrom"]): Promise<CreditCredential | null> {
  const token =
    from === "bearer" ? bearer(c) : from === "x-credit-token" ? (c.req.header("X-CREDIT-TOKEN")?.trim() ?? null) : null;
  return token ? creditCredential(c, token, from === "bearer" ? "bearer" : "x-credit-token") : null;
}

const BEARER_CREDIT = "`Authorization: Bearer zv_…`";

/** The 402 of a call that came without payment: its price as the price list writes it, and each way to pay it here. */
function unpaidDetail(call: PaidCall): string {
  const price = `${call.description} costs $${microToUsd(call.priceMicro)}`;
  const x402 =
    "sign the x402 terms in this answer (also in the PAYMENT-REQUIRED header) and repeat the call with " +
    "PAYMENT-SIGNATURE (or X-PAYMENT)";
  if (call.creditFrom === "bearer")
    return `${price}: send a credit token as ${BEARER_CREDIT} (buy one at POST /v1/credits), or ${x402}.`;
  if (call.creditFrom === "x-credit-token")
    return (
      `${price}: send a credit token in the X-CREDIT-TOKEN header (beside the management token in ` +
      `Authorization), or ${x402}.`
    );
  return `${price}: ${x402}.`;
}

export async function runPaid<T>(c: Context<AppEnv>, call: PaidCall, work: PaidWork<T>): Promise<T> {
  const terms = paymentTerms(c, call);
  const credit = await creditFromRequest(c, call.creditFrom);
  if (credit) {
    try {
      const value = await work.run({ type: "credit", ...credit }, credit.tokenId);
      c.set("charged", { operation: call.operation, micro: call.priceMicro });
      return value;
    } catch (err) {
      throw withTerms(err, terms);
    }
  }
  const header = c.req.header("PAYMENT-SIGNATURE") ?? c.req.header("X-PAYMENT");
  if (!header) {
    // The anonymous free tier (docs/api.md#rate-limits), off by default; never for a purchase, which would mint credit.
    const free = call.creditFrom === null ? null : await claimFreeCall(c);
    if (free) {
      try {
        const value = await work.run({ type: "prepaid" }, free.owner);
        c.set("charged", { operation: call.operation, micro: 0 });
        return value;
      } catch (err) {
        await free.release();
        throw withTerms(err, terms);
      }
    }
    throw paymentError("payment_required", unpaidDetail(call), terms);
  }
  return runWithX402(c, call, work, header, terms);
}

async function runWithX402<T>(
  c: Context<AppEnv>,
  call: PaidCall,
  work: PaidWork<T>,
  header: string,
  terms: PaymentTerms,
): Promise<T> {
  const db = c.env.DB;
  // viem (and its curves and ABI parsing) is loaded by the first x402 payment, not by every isolate's start.
  const [{ verifyPayment }, { settlerFor }] = await Promise.all([import("./x402/verify"), import("./x402/settle")]);
  const payment = await verifyPayment(header, terms, Math.floor(Date.now() / 1000)).catch((err) =>
    Promise.reject(withTerms(err, terms)),
  );
  const key: ClaimKey = {
    network: terms.chain.caip2,
    payer: payment.payer.toLowerCase(),
    nonce: payment.nonce.toLowerCase(),
  };
  const settler = settlerFor(c.env);
  await claimPayment(db, key, payment, call.operation, c.get("requestId"));

  let value: T;
  try {
    await settler.precheck(payment, terms);
    value = await work.run({ type: "prepaid", x402: true }, payment.payer);
  } catch (err) {
    await releasePayment(db, key);
    throw withTerms(err, terms);
  }

  try {
    const settlement = await settler.settle(payment, terms);
    await recordSettlement(db, key, settlement.transaction || null, true);
    // Recorded first: a worker that dies before this leaves the work to the alarm, which reads the settlement.
    await work.settled?.(value);
    c.header(payment.version === 1 ? "X-PAYMENT-RESPONSE" : "PAYMENT-RESPONSE", encodeHeader(settlement));
    // A purchase (no credit source) is money in, not a charge for work: the operator's revenue counts it.
    c.set("charged", { operation: call.operation, micro: call.creditFrom === null ? 0 : call.priceMicro });
    return value;
  } catch (err) {
    const tx = err instanceof AppError ? err.options.extra?.transaction : undefined;
    if (typeof tx === "string") {
      // Submitted but not confirmed in time: it may still land, so the work stays (undoing it could take
      // the payer's money for nothing) and the claim keeps the hash for reconciliation.
      await recordSettlement(db, key, tx, false);
    } else {
      await work.undo?.(value);
      await releasePayment(db, key);
    }
    throw withTerms(err, terms);
  }
}

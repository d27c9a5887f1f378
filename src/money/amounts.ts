/**
 * Money is an integer of micro-dollars everywhere inside the service
 * (1 µUSD = one USDC atomic unit). JSON carries dollars as numbers with at most
 * six decimals; conversion goes through decimal strings, never float arithmetic.
 */
import { formatUnits, parseUnits } from "viem";
import { z } from "@hono/zod-openapi";

const USDC_DECIMALS = 6;

/** Decimal text of a JSON number, or null if it has more than six decimals. */
function decimalText(value: number): string | null {
  if (!Number.isFinite(value)) return null;
  // toFixed(7) of a value with ≤ 6 decimals ends in 0 and round-trips; anything finer does not.
  const text = value.toFixed(USDC_DECIMALS + 1);
  if (Number(text) !== value || !text.endsWith("0")) return null;
  return text.slice(0, -1);
}

export function usdToMicro(value: number): number {
  const text = decimalText(value);
  if (text === null) throw new RangeError(`${value} is not a dollar amount with at most 6 decimals`);
  return Number(parseUnits(text, USDC_DECIMALS));
}

export function microToUsd(micro: number): number {
  return Number(formatUnits(BigInt(micro), USDC_DECIMALS));
}

/** A dollar amount in a request body: positive, at most six decimals. */
export const usdAmount = z
  .number()
  .positive()
  .refine((v) => decimalText(v) !== null, "must have at most 6 decimal places");

/**
 * Money is an integer of micro-dollars everywhere inside the service
 * (1 µUSD = one USDC atomic unit). JSON carries dollars as numbers with at most
 * six decimals; conversion goes through decimal strings, never float arithmetic.
 */
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
  // Exactly six decimals: the digits without the point are the micro-dollars (viem's parseUnits gives the same;
  // importing viem here would load all of it with every isolate, test/node/amounts.test.ts pins the two together).
  return Number(BigInt(text.replace(".", "")));
}

/** Micro-dollars as decimal text of dollars (viem's formatUnits): the last six digits are the fraction. */
function dollarsText(micro: bigint): string {
  const digits = micro.toString();
  const negative = digits.startsWith("-");
  const padded = (negative ? digits.slice(1) : digits).padStart(USDC_DECIMALS, "0");
  const fraction = padded.slice(-USDC_DECIMALS).replace(/0+$/, "");
  return `${negative ? "-" : ""}${padded.slice(0, -USDC_DECIMALS) || "0"}${fraction ? `.${fraction}` : ""}`;
}

export function microToUsd(micro: number): number {
  return Number(dollarsText(BigInt(micro)));
}

/** A dollar amount in a request body: positive, at most six decimals. */
export const usdAmount = z
  .number()
  .positive()
  .refine((v) => decimalText(v) !== null, "must have at most 6 decimal places");

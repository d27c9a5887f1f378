/**
 * Dollar amounts convert as viem's parseUnits and formatUnits convert them (money/amounts.ts does the
 * string math itself, so that viem is not loaded with every isolate): the same answers, and the same refusals.
 */
import { formatUnits, parseUnits } from "viem";
import { expect, it } from "vitest";
import { microToUsd, usdToMicro } from "../../src/money/amounts";

const MICROS = [
  0, 1, 9, 10, 99, 100, 999_999, 1_000_000, 1_000_001, 1_230_000, 250_000, 5_000_000, 123_456_789, 1_000_000_000_000,
  9_007_199_254_740_991,
];

it("gives micro-dollars as dollars as formatUnits does", () => {
  for (const micro of [...MICROS, ...MICROS.map((m) => -m)])
    expect(microToUsd(micro), String(micro)).toBe(Number(formatUnits(BigInt(micro), 6)));
  expect(() => microToUsd(1.5)).toThrow(RangeError);
});

it("gives dollars as micro-dollars as parseUnits does, and refuses a seventh decimal", () => {
  const dollars = [0, 0.000001, 0.25, 0.5, 1, 1.23, 5, 10.000001, 999.999999, 1000, 123456.789];
  for (const usd of [...dollars, ...dollars.map((d) => -d)])
    expect(usdToMicro(usd), String(usd)).toBe(Number(parseUnits(usd.toFixed(6), 6)));
  for (const micro of MICROS.slice(0, -1)) expect(usdToMicro(microToUsd(micro))).toBe(micro);
  expect(() => usdToMicro(0.0000001)).toThrow(RangeError);
  expect(() => usdToMicro(Number.NaN)).toThrow(RangeError);
});

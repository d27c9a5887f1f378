/**
 * The price list: the single source of every charge, generated from the
 * registry. No price is written anywhere else.
 */
import { allKinds } from "../resources/kinds";
import type { AnyKind } from "../kind/kind";
import { microToUsd } from "./amounts";

const DAY_SECONDS = 86400;

export interface PriceLine {
  operation: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  price_usd: number;
  unit: "call" | "day" | "mb";
  default_ttl_seconds: number | null;
  max_ttl_seconds: number | null;
  /** On a create line: the kind's limits (what a larger request is refused for, with 413 or 422). */
  limits?: Record<string, number>;
}

/** Price of `seconds` of life for a kind: its day rate per started day. */
export function lifetimePriceMicro(kind: AnyKind, seconds: number): number {
  return kind.dayPriceMicro * Math.max(1, Math.ceil(seconds / DAY_SECONDS));
}

/** Every kind's lines: the request asking has loaded every kind (app.ts). */
export function priceList(): PriceLine[] {
  return allKinds().flatMap((kind) => {
    const ttl = { default_ttl_seconds: kind.defaultTtlSeconds, max_ttl_seconds: kind.maxTtlSeconds };
    const perDay = microToUsd(kind.dayPriceMicro);
    return [
      {
        operation: `${kind.kind}.create`,
        method: "POST",
        path: `/v1/${kind.kind}`,
        price_usd: perDay,
        unit: "day",
        ...ttl,
        ...(kind.limits ? { limits: kind.limits } : {}),
      },
      {
        operation: `${kind.kind}.extend`,
        method: "POST",
        path: "/v1/resources/{id}/extend",
        price_usd: perDay,
        unit: "day",
        ...ttl,
      },
      ...kind.ops.map((op) => ({
        operation: `${kind.kind}.${op.name}`,
        method: op.method.toUpperCase() as PriceLine["method"],
        path: `/v1/${kind.kind}/{id}${op.path}`,
        price_usd: microToUsd(op.priceMicro),
        unit: "call" as const,
        default_ttl_seconds: null,
        max_ttl_seconds: null,
      })),
    ];
  });
}

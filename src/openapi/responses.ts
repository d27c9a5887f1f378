/** Builds the documented responses of a route: its success body plus every problem it can answer. */
import type { z } from "@hono/zod-openapi";
import { ERROR_CODES } from "../http/errors";
import { paymentRequired, problem } from "./schemas";

const problemContent = (schema: z.ZodType) => ({ "application/problem+json": { schema } });

export function errorResponses(statuses: number[]) {
  const out: Record<string, { description: string; content: ReturnType<typeof problemContent>; headers?: Record<string, unknown> }> = {};
  for (const status of [...new Set([...statuses, 400, 429, 500])].sort()) {
    const codes = Object.entries(ERROR_CODES).filter(([, [s]]) => s === status).map(([code]) => code);
    const description = `${codes.map((c) => `\`${c}\``).join(", ")}`;
    if (status === 402) {
      out[status] = {
        description: `Payment required (${description}); the body carries the x402 terms of this call.`,
        content: problemContent(paymentRequired),
        headers: { "PAYMENT-REQUIRED": { description: "Base64 JSON: the x402 v2 PaymentRequired object.", schema: { type: "string" } } },
      };
    } else {
      // 429's Retry-After, like the RateLimit-* headers of every response, is added once in document.ts.
      out[status] = { description, content: problemContent(problem) };
    }
  }
  return out;
}

export function jsonResponse(description: string, schema: z.ZodType) {
  return { description, content: { "application/json": { schema } } };
}

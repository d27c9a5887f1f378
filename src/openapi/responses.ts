/** Builds the documented responses of a route: its success body plus every problem it can answer. */
import type { z } from "@hono/zod-openapi";
import { ERROR_CODES } from "../http/error-codes";
import { paymentRequired, problem } from "./schemas";

const problemContent = (schema: z.ZodType) => ({ "application/problem+json": { schema } });

/** The codes each status answers with, as a description (`a`, `b`): worked out once, not once per route. */
let codesByStatus: Map<number, string> | undefined;
function codesOf(status: number): string {
  if (!codesByStatus) {
    codesByStatus = new Map();
    for (const [code, [s]] of Object.entries(ERROR_CODES)) {
      const known = codesByStatus.get(s);
      codesByStatus.set(s, known === undefined ? `\`${code}\`` : `${known}, \`${code}\``);
    }
  }
  return codesByStatus.get(status) ?? "";
}

export function errorResponses(statuses: number[]) {
  const out: Record<
    string,
    { description: string; content: ReturnType<typeof problemContent>; headers?: Record<string, unknown> }
  > = {};
  for (const status of [...new Set([...statuses, 400, 429, 500])].sort()) {
    const description = codesOf(status);
    if (status === 402) {
      out[status] = {
        description: `Payment required (${description}); the body carries the x402 terms of this call.`,
        content: problemContent(paymentRequired),
        headers: {
          "PAYMENT-REQUIRED": {
            description: "Base64 JSON: the x402 v2 PaymentRequired object.",
            schema: { type: "string" },
          },
        },
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

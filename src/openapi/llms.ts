/**
 * `/llms.txt` (the llms.txt convention): what the service is and how to pay, in a few
 * lines an agent reads first, then one line per kind linking its slice of the OpenAPI
 * document, so an agent loads the schemas of the kinds it uses and no others.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { allKinds, FAMILIES } from "../resources/kinds";
import { serviceUrls } from "../http/urls";
import { microToUsd } from "../money/amounts";
import { TAGS } from "./tags";

export function llmsTxt(c: Context<AppEnv>): string {
  const { baseUrl, authUrl } = serviceUrls(c);
  const name = c.env.SERVICE_NAME;
  const families = FAMILIES.map((family) => {
    const kinds = allKinds().filter((k) => k.family === family);
    if (kinds.length === 0) return "";
    const lines = kinds.map(
      (k) =>
        `- [${k.kind}](${baseUrl}/openapi.json?kinds=${k.kind}): ${k.summary} $${microToUsd(k.dayPriceMicro)} per day.`,
    );
    return `## ${TAGS[family]}\n\n${lines.join("\n")}\n`;
  }).filter(Boolean);
  // A \ at a line's end continues it: the text has no line break there.
  return `# ${name}

> Persistence for autonomous AI agents between runs: timers and schedules, key-value stores, journals, queues, blobs \
and more, over REST and MCP. No signup: pay per call with x402 (a signed USDC authorization on Base) or with a \
prepaid credit token. Every resource lives for a TTL and is managed with a token returned once at its creation.

- Pay: send \`Authorization: Bearer zv_…\` (a credit token, bought with x402 at \`POST ${baseUrl}/v1/credits\`, at \
least $${c.env.MIN_PURCHASE_USD || "0.25"}), or an x402 header per call (\`PAYMENT-SIGNATURE\` or \`X-PAYMENT\`). A \
call without payment answers 402 with the exact terms.
- Create: \`POST ${baseUrl}/v1/{kind}\` with the kind's JSON body: the answer holds \`management_token\` \
(\`zvm_…\`), shown once. Operate with it at \`/v1/{kind}/{id}/…\`, paying with \`X-CREDIT-TOKEN\`; status, \
extend, export and cancel are at \`/v1/resources/{id}\`.
- Delegate: \`POST ${baseUrl}/v1/resources/{id}/tokens\` with a management token makes a narrower \`zvm_…\` token \
for a sub-agent (operations or \`read-only\`, an expiry, a paid-call cap, key prefixes); it can be narrowed again, \
never widened, and revoking one revokes those made from it (\`GET\` lists, \`DELETE …/tokens/{token_id}\` revokes).
- Errors are \`application/problem+json\` with a stable \`code\`; a failed call is never charged. \
\`Idempotency-Key\` makes any POST safe to retry.
- Sandboxes: \`POST ${baseUrl}/v1/sandboxes\` (free) answers a credit token of sandbox money: what you create with \
it behaves as a real resource but lives on the sandbox's clock, which \`POST /v1/sandboxes/{id}/clock\` moves \
forward (\`advance_seconds\` or \`to\`), firing everything due on the way in order; \`GET \
/v1/sandboxes/{id}/timeline\` lists what fired. With \`deliveries: "log"\` nothing is sent: what its resources would \
send is kept in \`GET /v1/sandboxes/{id}/deliveries\`. Test a plan that spans days in seconds.
- MCP: \`POST ${baseUrl}/mcp\` (Streamable HTTP, stateless; protocol 2026-07-28 with \`server/discover\` and \
\`_meta\` on every request, or 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05 through \`initialize\`): \
\`list_kinds\`, \`describe_kind\`, \`create_resource\` and \`call_operation\` reach every kind; \`?toolsets=<family \
or kind>\` adds typed tools. Paid tools take the bearer credential or x402 in \`_meta["x402/payment"]\`; an unpaid \
call answers the terms.

${families.join("\n")}
## Reference

- [OpenAPI document](${baseUrl}/openapi.json): every kind (schemas without field descriptions, to stay small); \
\`?kinds=a,b\` or \`?kinds=<family>\` for a slice with them, \`?kinds=all\` for everything with them.
- [Prices](${baseUrl}/v1/prices): every charge, with each kind's limits.
- [API reference](${baseUrl}/docs): the document, rendered for people.
- [OAuth metadata](${authUrl}/.well-known/oauth-authorization-server): client credentials for an access token \
instead of the credit token.
`;
}

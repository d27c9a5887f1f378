/**
 * Which paths the shared middleware covers, in one place for app.ts (which
 * installs it) and the OpenAPI document (which describes it). /mcp and
 * /oauth are rate limited but take no Idempotency-Key: /mcp is a JSON-RPC
 * transport whose tool calls run through the /v1 routes, and a replayed
 * access token would be a stale one.
 */
export const RATE_LIMITED_PATHS = ["/v1/*", "/mcp", "/oauth/*", "/p/*"];
export const IDEMPOTENT_PATHS = ["/v1/*"];

/** Whether an OpenAPI path falls under one of the Hono patterns above. */
export const covers = (patterns: string[], path: string) =>
  patterns.some((p) => (p.endsWith("*") ? path.startsWith(p.slice(0, -1)) : path === p));

/**
 * Which paths the shared middleware covers, in one place for app.ts (which
 * installs it) and the OpenAPI document (which describes it). /mcp is rate
 * limited but takes no Idempotency-Key: it is a JSON-RPC transport, and the
 * tool calls it makes run through the /v1 routes.
 */
export const RATE_LIMITED_PATHS = ["/v1/*", "/mcp", "/oauth/*"];
export const IDEMPOTENT_PATHS = ["/v1/*", "/oauth/*"];

/** Whether an OpenAPI path falls under one of the Hono patterns above. */
export const covers = (patterns: string[], path: string) => patterns.some((p) => (p.endsWith("*") ? path.startsWith(p.slice(0, -1)) : path === p));

/**
 * `/mcp`: the MCP endpoint (docs/mcp.md), hand-written on Hono and
 * stateless in every revision it serves (2024-11-05 through 2026-07-28: revisions.ts). POST
 * carries JSON-RPC (endpoint.ts); GET and DELETE answer 405, as each revision allows: there is no
 * server-to-client stream to open and no session to end. The service's icon is served beside it.
 */
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "../env";
import { AppError } from "../http/errors";
import { errorResponses } from "../openapi/responses";
import type { AppFetch } from "./dispatch";
import { handlePost } from "./endpoint";
import { RpcFault, rpcError, rpcRequest, rpcResponse } from "./jsonrpc";
import { REVISIONS } from "./revisions";
import { ICON_PATH, ICON_SVG } from "./server-info";
import { buildRouteTools, type Catalogue } from "./tools";
import { TOOLSET_NAMES } from "./toolsets";
import { checkOrigin, resolveWire } from "./transport";

const MAX_BODY_BYTES = 1024 * 1024;

const DESCRIPTION =
  `MCP over Streamable HTTP, stateless, for protocol revisions ${REVISIONS.join(", ")}. ` +
  "A 2026-07-28 client sends each request with `io.modelcontextprotocol/protocolVersion` and " +
  "`…/clientCapabilities` in `params._meta` and the " +
  "`MCP-Protocol-Version`, `Mcp-Method` (and `Mcp-Name`) headers; `server/discover` lists the versions and " +
  "capabilities, results carry " +
  "`resultType`. Older clients `initialize` (answered with their version, or 2025-11-25 when theirs is " +
  "unknown) and send " +
  "`MCP-Protocol-Version` afterwards (none means 2025-03-26); no session id is issued. JSON-RPC batches " +
  "only for 2025-03-26. " +
  "Methods: `tools/list` (paginated, free), `tools/call`, `resources/list`, `resources/templates/list`, " +
  "`resources/read`, `prompts/list`, " +
  "`prompts/get`, `completion/complete`, and per revision `initialize`, `ping`, `logging/setLevel` or " +
  "`server/discover`. " +
  "`tools/list` shows a small generic surface that reaches every kind (`list_kinds`, `describe_kind`, " +
  "`create_resource`, `call_operation`, " +
  "the resource, money and Ask tools); `?toolsets=` adds typed tools of chosen families or kinds. Tools " +
  "are paid as the REST operations " +
  "they run: this request's bearer credential (credit token or OAuth access token), an x402 header, or " +
  '`params._meta["x402/payment"]`; ' +
  "an unpaid call is a tool result with `isError: true` carrying the x402 PaymentRequired terms, and the " +
  "paid retry gets the settlement " +
  'in `result._meta["x402/payment-response"]`. A call that waits answers as an event stream of ' +
  "`notifications/progress` when it sent a " +
  "`progressToken`. A request with an `Origin` other than the service's own (or `MCP_ALLOWED_ORIGINS`) is " +
  "refused with 403. " +
  "GET and DELETE answer 405.";

function documentEndpoint(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/mcp",
    operationId: "mcp",
    tags: ["MCP"],
    summary:
      `JSON-RPC tool endpoint (MCP, Streamable HTTP, protocol ${REVISIONS[REVISIONS.length - 1]} to ` +
      `${REVISIONS[0]})`,
    description: DESCRIPTION,
    security: [{}, { credit: [] }, { x402: [] }, { x402v2: [] }],
    request: {
      headers: z.object({
        "MCP-Protocol-Version": z
          .enum(REVISIONS)
          .optional()
          .describe(
            "The revision after initialize (none: 2025-03-26), or 2026-07-28 with every request. Another " +
              "value is a 400. (`Accept` must admit application/json and, from 2025-03-26, " +
              "text/event-stream: else 406.)",
          ),
      }),
      query: z.object({
        toolsets: z
          .string()
          .max(2000)
          .optional()
          .openapi({ example: "memory,wakeups" })
          .describe(
            "Comma-separated families or kinds whose typed tools (`create_<kind>`, `<kind>_<operation>`) " +
              "`tools/list` adds to the default generic ones, or `all`. " +
              `Known: ${TOOLSET_NAMES.join(", ")}. An unknown name is a 400.`,
          ),
      }),
      body: {
        required: true,
        content: {
          "application/json": {
            schema: z.union([rpcRequest, z.array(rpcRequest).min(1)]),
            example: {
              jsonrpc: "2.0",
              id: 1,
              method: "tools/call",
              params: { name: "describe_kind", arguments: { kind: "counters" } },
            },
          },
        },
      },
    },
    responses: {
      200: {
        description:
          "JSON-RPC answers: one, or an array for a batch; `text/event-stream` for a call that reports " +
          "progress. Errors of a method (-32601 … -32603) ride a 200, but for those below.",
        content: {
          "application/json": { schema: z.union([rpcResponse, z.array(rpcResponse)]) },
          "text/event-stream": { schema: z.string() },
        },
      },
      202: { description: "Only notifications or responses were sent: nothing to answer." },
      400: {
        description:
          "A JSON-RPC error: the body is not JSON (-32700) or not JSON-RPC (-32600), a batch where the " +
          "revision has none, an unsupported MCP-Protocol-Version (-32022), a 2026-07-28 request without " +
          "its `_meta` (-32602) or whose headers disagree with its body (-32020).",
        content: { "application/json": { schema: rpcResponse } },
      },
      403: {
        description: "A JSON-RPC error: the Origin may not call this endpoint.",
        content: { "application/json": { schema: rpcResponse } },
      },
      404: {
        description: "A JSON-RPC error -32601: a method 2026-07-28 does not have.",
        content: { "application/json": { schema: rpcResponse } },
      },
      406: {
        description: "A JSON-RPC error: Accept does not admit what the revision answers with.",
        content: { "application/json": { schema: rpcResponse } },
      },
      // Refusals before JSON-RPC is read: body size, rate limits.
      ...errorResponses([413, 415]),
    },
  });
}

/** GET and DELETE: refused by Origin and version as a POST is, then 405 (no stream to open, no session to end). */
function otherMethod(c: Context<AppEnv>): Response {
  try {
    checkOrigin(c);
    resolveWire(c, null);
  } catch (err) {
    if (err instanceof RpcFault && err.status)
      return c.json(rpcError(null, err.code, err.message, err.data), err.status);
    throw err;
  }
  throw new AppError(
    "method_not_allowed",
    "The MCP endpoint answers POST only: no server-to-client stream, no session to end.",
    { headers: { Allow: "POST" } },
  );
}

/** Registers `/mcp` on `app`, which is also the app its tools call into. */
export function registerMcpRoutes(app: OpenAPIHono<AppEnv>): void {
  let catalogue: Catalogue | undefined;
  // Built on first use, so it sees every route whatever the order of registration.
  const tools = () => (catalogue ??= buildRouteTools(app));
  const fetcher: AppFetch = app;

  app.use(
    "/mcp",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new AppError("payload_too_large", `Bodies are limited to ${MAX_BODY_BYTES} bytes.`);
      },
    }),
  );
  app.post("/mcp", (c) => handlePost({ app: fetcher, c, tools }));
  app.all("/mcp", otherMethod);
  // An SVG opened on its own is a document: this one has no script, and may load nothing.
  app.get(ICON_PATH, (c) =>
    c.body(ICON_SVG, 200, {
      "Content-Type": "image/svg+xml",
      "Cache-Control": "public, max-age=86400",
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    }),
  );
  documentEndpoint(app);
}

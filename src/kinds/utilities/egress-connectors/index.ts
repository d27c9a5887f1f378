/**
 * egress-connectors: requests to an allowlist of hosts, sent from the operator's fixed addresses
 * (a forward proxy's CONNECT tunnels, src/delivery/connect-proxy.ts), as Fixie and QuotaGuard do, for
 * targets that allowlist callers by IP. The answer comes back whole, within the connector's size cap;
 * a request refused (a host not allowed, a guarded address) or failed (timeout, proxy down, too
 * large) is not charged. Headers the target needs (an API key) can be kept sealed on the connector.
 */
import { z } from "@hono/zod-openapi";
import { AppError } from "../../../http/errors";
import { noInput } from "../../../openapi/schemas";
import { egressIps, egressProxy } from "../../../delivery/connect-proxy";
import { kindOf } from "../../../kind/kind";
import {
  allRequests,
  fetchVia,
  hostPattern,
  record,
  requestsPage,
  saveHeaders,
  sealHeaders,
  TABLES,
  usage,
} from "./store";
import {
  connectorCreate,
  fetchedView,
  fetchInput,
  MAX_HOSTS,
  MAX_REQUEST_BYTES,
  MAX_REQUEST_LOG,
  MAX_RESPONSE_BYTES,
  requestsInput,
  requestsPage as requestsPageSchema,
  type ConnectorConfig,
  type ConnectorCreate,
} from "./schema";

const FETCH_PRICE = 1000; // µUSD, $0.001 a request
const OP_PRICE = 100; // $0.0001

const kind = kindOf<ConnectorConfig>();

const connectorView = z
  .object({
    allowed_hosts: z.array(z.string()),
    header_names: z.array(z.string()),
    max_response_bytes: z.int(),
    egress_ips: z.array(z.string()).describe("The addresses requests leave from: allowlist these at the target."),
  })
  .openapi("EgressConnector");

export const egressConnectors = kind.define({
  kind: "egress-connectors",
  family: "utilities",
  title: "Egress connectors",
  summary:
    "Requests to an allowlist of hosts (exact or `*.domain`), sent from the operator's fixed egress " +
    "addresses (`egress_ips`, also in the price list) " +
    `through its forward proxy; the answer returned whole, up to ${MAX_RESPONSE_BYTES} bytes. Other hosts ` +
    `get 403; refused or failed requests are not charged.`,
  // Validates the create body; sealCreate turns it into the record's config (headers sealed, hosts canonical,
  // egress_ips added).
  createSchema: connectorCreate as unknown as z.ZodType<ConnectorConfig>,
  example: { allowed_hosts: ["example.com", "*.example.com"], headers: { authorization: "Bearer example-api-key" } },
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 1000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: {
    max_allowed_hosts: MAX_HOSTS,
    max_response_bytes: MAX_RESPONSE_BYTES,
    max_request_bytes: MAX_REQUEST_BYTES,
    request_log: MAX_REQUEST_LOG,
  },
  sealCreate: async (env, config) => {
    if (!egressProxy(env))
      throw new AppError(
        "engine_unavailable",
        "This service has no egress proxy configured (EGRESS_PROXY_URL): connectors cannot be made.",
      );
    const { headers, ...rest } = config as unknown as ConnectorCreate;
    const shown: ConnectorConfig = {
      ...rest,
      allowed_hosts: [...new Set(rest.allowed_hosts.map(hostPattern))],
      header_names: Object.keys(headers),
      egress_ips: egressIps(env),
    };
    return { config: shown, sealed: sealHeaders(env, headers) };
  },
  init: (store, _config, sealed) => saveHeaders(store, sealed as string),
  usage: (store) => usage(store.sql),
  exportData: (store, config) => ({ connector: viewOf(config), requests: allRequests(store.sql) }),
  ops: [
    kind.op({
      name: "fetch",
      method: "post",
      path: "/fetch",
      summary: "Send a request to an allowed host from the fixed egress addresses; the answer comes back whole",
      priceMicro: FETCH_PRICE,
      input: fetchInput,
      output: fetchedView,
      errors: [403, 413, 502, 503],
      example: {
        input: {
          url: "https://example.com/echo/egress-example",
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"hello":"world"}',
        },
      },
      prepare: (ctx, config, input) => fetchVia(ctx, config, input),
      run: (store, _config, _input, fetched) => record(store, fetched),
    }),
    kind.op({
      name: "get_connector",
      method: "get",
      path: "/connector",
      summary: "The allowlist, the sealed headers' names and the egress addresses",
      priceMicro: OP_PRICE,
      input: noInput,
      output: connectorView,
      run: (_store, config) => viewOf(config),
    }),
    kind.op({
      name: "list_requests",
      method: "get",
      path: "/requests",
      summary: `Requests sent, newest first (the last ${MAX_REQUEST_LOG}; queries not kept)`,
      priceMicro: OP_PRICE,
      input: requestsInput,
      output: requestsPageSchema,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => requestsPage(store.sql, input.limit, input.cursor),
    }),
  ],
});

function viewOf(config: ConnectorConfig) {
  return {
    allowed_hosts: config.allowed_hosts,
    header_names: config.header_names,
    max_response_bytes: config.max_response_bytes,
    egress_ips: config.egress_ips,
  };
}

/** The one test harness: HTTP calls into the worker, x402 signing, and fixtures (buy credits, create a resource). */
import type { ResourceObject } from "../durable-objects/ResourceObject";
import { SELF, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { expect } from "vitest";
import type { OpenAPIHono, z } from "@hono/zod-openapi";
import { createdResource, paymentRequired, problem, resourceRecord } from "../src/openapi/schemas";
import type { deliveryPage } from "../src/delivery/schemas";
import type { AnyKind, OpNames, OpOutput, TypedKind } from "../src/kind/kind";
import type { AnyOp } from "../src/kind/op";

export const ORIGIN = "https://zeitvault.test";

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
}

export async function call(method: string, path: string, opts: CallOptions = {}): Promise<Response> {
  const headers = new Headers(opts.headers);
  let body: string | Uint8Array | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === "string" || opts.body instanceof Uint8Array ? opts.body : JSON.stringify(opts.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  return SELF.fetch(`${ORIGIN}${path}`, { method, headers, body });
}

/**
 * A JSON body. Without a type it is an object of unknown fields: enough for `expect` to compare
 * them, and a test that reads into a field names what it reads (`json<T>`, typed by the schema or
 * an interface of its own), as `answer` and `problemOf` do by the published schemas.
 */
export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/**
 * The successful answer of `kind`'s operation `name`, typed by that op's `output` and checked
 * against it: an answer that drifts from what the OpenAPI document says fails here.
 */
export async function answer<K extends TypedKind, N extends OpNames<K>>(
  kind: K,
  name: N,
  res: Response,
): Promise<OpOutput<K, N>> {
  const op = kind.ops.find((o) => o.name === name);
  if (!op) throw new Error(`${kind.kind} has no operation ${name}`);
  const text = await res.text();
  expect(res.status, `${kind.kind}.${name}: ${text}`).toBeLessThan(300);
  return checked(op.output, JSON.parse(text), `${kind.kind}.${name}`) as OpOutput<K, N>;
}

/**
 * The operations of resource `id`, called as the API is: the method is the op's, the path (below
 * `/v1/{kind}/{id}`) is the test's own. `ok` expects success and answers the op's typed output;
 * `refused` expects a problem and answers it.
 */
export function opsOn<K extends TypedKind>(kind: K, id: string, mgmt: string, credit?: string) {
  const send = (name: OpNames<K>, path: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const op = kind.ops.find((o) => o.name === name);
    if (!op) throw new Error(`${kind.kind} has no operation ${name}`);
    return call(op.method.toUpperCase(), `/v1/${kind.kind}/${id}${path}`, {
      body: payload,
      headers: { ...headers, ...managed(mgmt, credit) },
    });
  };
  return {
    send,
    /**
     * Any call on the resource, by method and path, as a test that expects either outcome reads it:
     * a success is checked against the output of the op the path routes to, a refusal against the
     * Problem schema (its fields are typed by `refused`; the successes by `ok`). Its body is an
     * object of unknown fields unless the test names the type it reads, as with `json<T>`: the
     * op's output (`OpOutput<typeof kind, "name">`) or `Problem`.
     */
    reply: async <T = Record<string, unknown>>(
      method: string,
      path: string,
      payload?: unknown,
      headers: Record<string, string> = {},
    ): Promise<{ status: number; headers: Headers; body: T }> => {
      const res = await call(method, `/v1/${kind.kind}/${id}${path}`, {
        body: payload,
        headers: { ...headers, ...managed(mgmt, credit) },
      });
      if (res.status >= 400) return { status: res.status, headers: res.headers, body: (await problemOf(res)) as T };
      const op = routedOp(kind, method, path);
      if (!op.output || op.servesObject || !res.headers.get("content-type")?.includes("json"))
        return { status: res.status, headers: res.headers, body: {} as T };
      return { status: res.status, headers: res.headers, body: (await answer(kind, op.name as OpNames<K>, res)) as T };
    },
    ok: async <N extends OpNames<K>>(name: N, path: string, payload?: unknown, headers?: Record<string, string>) =>
      answer(kind, name, await send(name, path, payload, headers)),
    refused: async (name: OpNames<K>, path: string, payload?: unknown, headers?: Record<string, string>) =>
      problemOf(await send(name, path, payload, headers)),
  };
}

/** The op of `kind` that `method` and `path` (below the resource, query aside) route to. */
function routedOp(kind: AnyKind, method: string, path: string): AnyOp {
  const bare = path.split("?")[0]!;
  const op = kind.ops.find(
    (o) => o.method === method.toLowerCase() && new RegExp(`^${o.path.replace(/\{\w+\}/g, "[^/]+")}$`).test(bare),
  );
  if (!op) throw new Error(`${kind.kind}: no operation answers ${method} ${bare}`);
  return op;
}

/** A refused call's body (docs/api.md#errors), as the published Problem schema has it. */
export type Problem = z.infer<typeof problem>;

/** A 402 with the x402 v1 terms, as the published PaymentRequired schema has it. */
export type PaymentRequired = z.infer<typeof paymentRequired>;

/** A resource's record (`GET /v1/resources/{id}`), as the published ResourceRecord schema has it. */
export type ResourceRecord = z.infer<typeof resourceRecord>;

/** What `GET /v1/resources/{id}/export` answers (the ResourceExport schema): `data` is in the kind's own shape. */
export interface ResourceExport<Data> {
  resource: ResourceRecord;
  data: Data;
}

/** The price list (`GET /v1/prices`), as the PriceList schema (src/money/routes.ts) has it. */
export interface PriceList {
  currency: "USD";
  operations: {
    operation: string;
    method: string;
    path: string;
    price_usd: number;
    unit: "call" | "day" | "mb";
    default_ttl_seconds: number | null;
    max_ttl_seconds: number | null;
    limits?: Record<string, number>;
  }[];
  limits: { deliveries: { settled_kept: number; settled_days: number; attempts_kept: number } };
  egress: { ips: string[] };
}

/** A signed statement (`GET /v1/receipts`), as the Receipt schema (src/money/receipts.ts) has it. */
export interface Receipt {
  statement: {
    token_id: string;
    period: { since: string; until: string };
    charges: { at: string; operation: string; resource_id: string | null; amount_usd: number; request_id: string }[];
    total_usd: number;
    balance_usd: number;
    issued_at: string;
  };
  signature: string;
}

/** A resource's delivery log (`GET /v1/{kind}/{id}/deliveries`), as the published DeliveryPage schema has it. */
export type DeliveryPage = z.infer<typeof deliveryPage>;
export type Delivery = DeliveryPage["items"][number];

/** `GET /openapi.json`: an OpenAPI 3.1 document, as the generator types it. */
export type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

/** A refused call's problem+json (docs/api.md#errors), typed and checked by the published Problem schema. */
export async function problemOf(res: Response, status?: number): Promise<Problem> {
  const text = await res.text();
  if (status !== undefined) expect(res.status, text).toBe(status);
  else expect(res.status, text).toBeGreaterThanOrEqual(400);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  const body = checked(problem, JSON.parse(text), "problem");
  expect(body.status).toBe(res.status);
  return body;
}

/**
 * `value` as `schema` reads it, failing the test with the schema's message when it does not; unknown fields are kept.
 */
function checked<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  expect(parsed.success, `${what}: ${parsed.error?.message}\n${JSON.stringify(value)}`).toBe(true);
  return value as T;
}

export interface PaymentOptions {
  key?: Hex;
  priceMicro: number;
  version?: 1 | 2;
  value?: bigint;
  payTo?: Hex;
  network?: string;
  asset?: Hex;
  chainId?: number;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
  assetName?: string;
}

/** Signs a real EIP-3009 authorization for the configured chain and encodes it as the client libraries do. */
export async function signPayment(o: PaymentOptions): Promise<{ header: string; name: string; payer: Hex }> {
  const account = privateKeyToAccount(o.key ?? generatePrivateKey());
  const version = o.version ?? 1;
  const chainId = o.chainId ?? Number(env.X402_CHAIN_ID);
  const asset = o.asset ?? (env.X402_ASSET as Hex);
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: account.address,
    to: o.payTo ?? (env.X402_PAY_TO as Hex),
    value: o.value ?? BigInt(o.priceMicro),
    validAfter: o.validAfter ?? now - 60n,
    validBefore: o.validBefore ?? now + 300n,
    nonce: o.nonce ?? toHex(crypto.getRandomValues(new Uint8Array(32))),
  };
  const signature = await account.signTypedData({
    domain: {
      name: o.assetName ?? env.X402_ASSET_NAME,
      version: env.X402_ASSET_VERSION,
      chainId,
      verifyingContract: asset,
    },
    types: {
      TransferWithAuthorization: [
        { name: "from", type: "address" },
        { name: "to", type: "address" },
        { name: "value", type: "uint256" },
        { name: "validAfter", type: "uint256" },
        { name: "validBefore", type: "uint256" },
        { name: "nonce", type: "bytes32" },
      ],
    },
    primaryType: "TransferWithAuthorization",
    message: authorization,
  });
  const payload = {
    signature,
    authorization: Object.fromEntries(Object.entries(authorization).map(([k, v]) => [k, String(v)])),
  };
  const body =
    version === 1
      ? { x402Version: 1, scheme: "exact", network: o.network ?? env.X402_NETWORK, payload }
      : {
          x402Version: 2,
          accepted: {
            scheme: "exact",
            network: o.network ?? `eip155:${chainId}`,
            amount: String(o.priceMicro),
            asset,
            payTo: authorization.to,
            maxTimeoutSeconds: 300,
            extra: { name: env.X402_ASSET_NAME, version: env.X402_ASSET_VERSION },
          },
          payload,
        };
  return {
    header: btoa(JSON.stringify(body)),
    name: version === 1 ? "X-PAYMENT" : "PAYMENT-SIGNATURE",
    payer: account.address,
  };
}

export const usd = (dollars: number) => Math.round(dollars * 1e6);

/** Buys credits with a freshly signed x402 payment; returns the credit token. */
export async function buyCredits(
  amountUsd: number,
  key?: Hex,
): Promise<{ token: string; tokenId: string; res: Response }> {
  const { header, name } = await signPayment({ priceMicro: usd(amountUsd), key });
  const res = await call("POST", "/v1/credits", { body: { amount_usd: amountUsd }, headers: { [name]: header } });
  expect(res.status, await res.clone().text()).toBe(201);
  const body = await json<{ credit_token: string; token_id: string }>(res);
  return { token: body.credit_token, tokenId: body.token_id, res };
}

/** A credit token's balance, as the CreditBalance schema (src/money/routes.ts) has it. */
export interface CreditBalance {
  token_id: string;
  type: "credit" | "subtoken";
  balance_usd: number;
  spent_usd: number;
  cap_usd: number | null;
  cap_remaining_usd: number | null;
  expires_at: string;
}

export async function balanceOf(token: string): Promise<CreditBalance> {
  const res = await call("GET", "/v1/credits/balance", { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return json(res);
}

export async function createResource(kind: string, creditToken: string, body: Record<string, unknown> = {}) {
  const res = await call("POST", `/v1/${kind}`, { body, headers: { authorization: `Bearer ${creditToken}` } });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  const record = checked(createdResource, JSON.parse(text), `${kind} create`);
  return { record, id: record.id, mgmt: record.management_token };
}

/**
 * The Standard Webhooks verifier of a resource created with a `notify_url` (its signing secret is shown once, at
 * create).
 */
export function verifierOf(record: { signing_secret?: string }): Webhook {
  expect(record.signing_secret, "a signing secret: was the resource created without notify_url?").toMatch(/^whsec_/);
  return new Webhook(record.signing_secret!);
}

/** Unix ms of a time an answer must hold (a nullable field that a test expects set). */
export function msOf(time: string | null | undefined): number {
  expect(time, "a time").toEqual(expect.any(String));
  return Date.parse(time!);
}

/** The public address of a resource whose kind has one. */
export function publicUrl(record: { urls: { public: string | null } }): string {
  expect(record.urls.public, "a public address").toMatch(/^https?:\/\//);
  return record.urls.public!;
}

/** Headers for a paid operation on a resource: management token plus the paying credit token. */
export const managed = (mgmt: string, credit?: string): Record<string, string> => ({
  authorization: `Bearer ${mgmt}`,
  ...(credit ? { "x-credit-token": credit } : {}),
});

/** The Durable Object of resource `id`, for driving its alarm or looking into its storage. */
export const stubOf = (id: string) =>
  env.RESOURCES.get(env.RESOURCES.idFromName(id)) as unknown as DurableObjectStub<ResourceObject>;

/** Every row of every table in resource `id`'s object, as text: what a scan for a plaintext secret reads. */
export const storageDump = (id: string): Promise<string> =>
  runInDurableObject(stubOf(id), (_o, state) => {
    const tables = state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'",
      )
      .toArray();
    return tables
      .map((t) => `${t.name}: ${JSON.stringify(state.storage.sql.exec(`SELECT * FROM "${t.name}"`).toArray())}`)
      .join("\n");
  });

/** What R2 holds under resource `id`'s prefix, in key order. */
export async function r2Keys(id: string): Promise<string[]> {
  return (await env.BUCKET.list({ prefix: `${id}/` })).objects.map((o) => o.key);
}

/**
 * Lets `ms` pass on resource `id`'s clock (the test clock: its object's time runs ahead, nothing is
 * rewritten) and runs each of its alarms that is due by then, as the runtime would; with
 * `{ alarms: false }` they are left for `runDueAlarms`, to look at the state before they ran.
 */
export async function advance(id: string, ms: number, options: { alarms?: boolean } = {}): Promise<void> {
  await stubOf(id).advanceClock(Math.max(0, Math.ceil(ms)), options.alarms !== false);
}

/** Runs resource `id`'s alarm as long as it is due. */
export async function runDueAlarms(id: string): Promise<void> {
  const stub = stubOf(id);
  for (let run = 0; run < 50; run++) {
    const at = await runInDurableObject(stub, (_obj, state) => state.storage.getAlarm());
    if (at === null || at > Date.now()) return;
    await runDurableObjectAlarm(stub);
  }
  throw new Error(`the alarm of ${id} stayed due after 50 runs`);
}

/** Lets resource `id`'s clock reach its expiry: its alarm ends it. */
export async function expire(id: string): Promise<void> {
  const expiresAt = await runInDurableObject(
    stubOf(id),
    (_obj, state) =>
      state.storage.sql.exec<{ expires_at: number }>("SELECT expires_at FROM resource_meta").one().expires_at,
  );
  await advanceTo(id, expiresAt);
}

/** Lets time pass on resource `id`'s clock until `at` (an RFC 3339 time or Unix ms), running its due alarms. */
export async function advanceTo(id: string, at: string | number): Promise<void> {
  const now = await stubOf(id).advanceClock(0);
  await advance(id, (typeof at === "string" ? Date.parse(at) : at) - now);
}

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The body's exact bytes, base64. */
  raw: string;
  status: number;
}

/**
 * What the local webhook receiver got for `name` (test/peers/receiver.ts), once at least `count` arrived: deliveries
 * cross a real queue, so poll, boundedly.
 */
export async function received(name: string, count: number): Promise<Received[]> {
  for (let i = 0; i < 100; i++) {
    const log = (await (await fetch(`${env.TEST_RECEIVER_URL}/_log/${name}`)).json()) as Received[];
    if (log.length >= count) return log;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`receiver got fewer than ${count} requests for ${name}`);
}

/**
 * Makes the local receiver serve `body` at `${TEST_RECEIVER_URL}/content/${name}` (and /redirect/${name}); returns that
 * URL.
 */
export async function serveContent(
  name: string,
  body: string | Uint8Array,
  options: { status?: number; type?: string; headers?: Record<string, string> } = {},
): Promise<string> {
  await fetch(`${env.TEST_RECEIVER_URL}/_content/${name}`, {
    method: "PUT",
    headers: {
      "content-type": options.type ?? "text/plain",
      "x-status": String(options.status ?? 200),
      "x-headers": JSON.stringify(options.headers ?? {}),
    },
    body,
  });
  return `${env.TEST_RECEIVER_URL}/content/${name}`;
}

/**
 * One MCP `tools/call` over raw JSON-RPC (protocol 2025-11-25, which has structuredContent), paid by `bearer`: the
 * tool's result.
 */
export async function mcpTool(
  bearer: string,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError?: boolean; structuredContent: Record<string, unknown> }> {
  const res = await call("POST", "/mcp", {
    body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
    headers: {
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${bearer}`,
      "mcp-protocol-version": "2025-11-25",
    },
  });
  return (await json<{ result: { isError?: boolean; structuredContent: Record<string, unknown> } }>(res)).result;
}

/**
 * A local stand-in for Cloudflare's v4 API, for testing `npm run setup` and `npm run deploy` with the real
 * wrangler CLI: point wrangler at it with CLOUDFLARE_API_BASE_URL (`${url}/client/v4`), and authenticate with
 * CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID. It keeps the account's state in memory (D1 databases
 * and their migrations table, R2 buckets, queues and consumers, Worker scripts with their secrets,
 * settings, versions and deployments) and implements exactly the routes wrangler 4.86 calls for what the
 * two scripts do, found by running wrangler against it. Every request is recorded (method, path, whether
 * it changes anything, and a body summary with every secret value left out) for the tests to assert on;
 * a route it does not know answers 404 and is recorded as `unknown`, so a new wrangler call shows up.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { d1Routes } from "./d1";
import { storageRoutes } from "./storage";
import { workerRoutes } from "./workers";
import { newAccount, seeder, type Account, type Reply, type Route } from "./state";

export type { Account } from "./state";

export interface RecordedRequest {
  method: string;
  /** The path below /client/v4, with its query string. */
  path: string;
  /** False for what only reads: GETs, and D1 queries that only SELECT. */
  mutating: boolean;
  /** What the body carried, secret values left out: JSON keys, a query's SQL, a multipart form's parts. */
  summary: string;
  status: number;
  unknown?: true;
}

export interface CloudflareApi {
  /** The origin; wrangler's CLOUDFLARE_API_BASE_URL is `${url}/client/v4`. */
  url: string;
  accountId: string;
  account: Account;
  requests: RecordedRequest[];
  /** Puts things into the account directly, for a test's starting point. */
  seed: ReturnType<typeof seeder>;
  /** The environment that points wrangler here. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const ROUTES: Route[] = [...d1Routes, ...storageRoutes, ...workerRoutes];

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, reply: Reply) {
  const status = reply.status ?? (reply.errors?.length ? 400 : 200);
  const body =
    reply.raw ??
    JSON.stringify({
      success: !reply.errors?.length,
      errors: reply.errors ?? [],
      messages: [],
      result: reply.result ?? null,
      ...(reply.resultInfo ? { result_info: reply.resultInfo } : {}),
    });
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
}

export async function startCloudflareApi(accountId = "0123456789abcdef0123456789abcdef"): Promise<CloudflareApi> {
  const account = newAccount(accountId);
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const body = await readBody(req);
    const path = url.pathname.replace(/^\/client\/v4/, "");
    const method = req.method ?? "GET";
    const entry: RecordedRequest = {
      method,
      path: path + url.search,
      mutating: method !== "GET",
      summary: "",
      status: 404,
    };
    requests.push(entry);
    for (const route of ROUTES) {
      if (route.method !== method) continue;
      const match = route.path.exec(path);
      if (!match) continue;
      try {
        const reply = await route.handle({
          account,
          params: match.groups ?? {},
          query: url.searchParams,
          body,
          contentType: req.headers["content-type"] ?? "",
          entry,
        });
        entry.status = reply.status ?? (reply.errors?.length ? 400 : 200);
        return send(res, reply);
      } catch (error) {
        entry.status = 500;
        return send(res, { status: 500, errors: [{ code: 10000, message: String(error) }] });
      }
    }
    entry.unknown = true;
    send(res, {
      status: 404,
      errors: [{ code: 7003, message: `No route for ${method} ${path} (the stand-in does not know it)` }],
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: origin,
    accountId,
    account,
    requests,
    seed: seeder(account),
    env: {
      CLOUDFLARE_API_BASE_URL: `${origin}/client/v4`,
      CLOUDFLARE_API_TOKEN: "stand-in-token",
      CLOUDFLARE_ACCOUNT_ID: accountId,
      WRANGLER_SEND_METRICS: "false",
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

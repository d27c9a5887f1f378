/**
 * Sandboxes (docs/api.md#sandboxes): free, rate-limited like the other free writes, each with its own
 * money (a credit token good only inside it) and a clock its owner moves. The work is the objects':
 * the account refuses money from the wrong side, the sandbox moves its resources' clocks.
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { AppError, unwrap } from "../http/errors";
import { requireCredit, type CreditCredential } from "../auth/credentials";
import { issueCreditToken } from "../auth/tokens";
import { accountStub, sandboxStub } from "../stubs";
import { errorResponses, jsonResponse } from "../openapi/responses";
import { pageLimit, seqCursor } from "../openapi/schemas";
import { CREDIT } from "../openapi/security";
import { microToUsd } from "../money/amounts";
import { iso } from "../time";
import type { AdvanceResult, ClockTarget, LoggedDelivery, SandboxEvent, SandboxView } from "../rpc/sandbox";
import { SANDBOX_CREDIT_MICRO } from "./limits";
import { accountIdOf, sandboxIdOf } from "./ids";
import {
  clockAnswer,
  clockBody,
  createdSandbox,
  createSandboxBody,
  sandboxIdParam,
  sandboxView,
  timelineAnswer,
  deliveriesAnswer,
} from "./schema";
import { CLOCK_EXAMPLE, DELIVERY_LOG_EXAMPLE } from "./example";

const SANDBOXES = { tags: ["Sandboxes"] };

const viewBody = (v: SandboxView) => ({
  id: v.id,
  label: v.label,
  deliveries: v.deliveries,
  state: v.state,
  created_at: iso(v.created_at),
  expires_at: iso(v.expires_at),
  now: iso(v.now),
  resources: v.resources,
  events: v.events,
});
const eventBody = (e: SandboxEvent) => ({ ...e, at: iso(e.at) });
const loggedBody = (d: LoggedDelivery) => ({ ...d, at: iso(d.at) });
const cursorOf = (next: number | null) => (next === null ? null : String(next));
const clockResult = (r: AdvanceResult) => ({
  from: iso(r.from),
  to: iso(r.to),
  reached: iso(r.reached),
  more: r.more,
  fired: r.fired.map(eventBody),
});

/**
 * The sandbox's credit token (or a sub-token of it) as the bearer: another token is refused before any object is asked.
 */
async function sandboxCredential(c: Context<AppEnv>, id: string): Promise<CreditCredential> {
  const cred = await requireCredit(c);
  if (cred.accountId !== accountIdOf(id))
    throw new AppError(
      "forbidden",
      `This credit token is not sandbox ${id}'s: send the credit_token its creation answered.`,
    );
  return cred;
}

export function registerSandboxRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/sandboxes",
      operationId: "create_sandbox",
      ...SANDBOXES,
      summary: "Make a sandbox: free money and a clock you move (free, rate-limited)",
      description:
        "Answers a credit token of sandbox money: resources created with it are the sandbox's, behave as " +
        "real ones, and live on its clock. It pays for nothing outside, and nothing else pays inside. The " +
        "sandbox ends after `ttl_seconds` (real time) with all its resources.",
      security: [],
      request: {
        body: {
          required: false,
          content: { "application/json": { schema: createSandboxBody, example: { label: "three days of my plan" } } },
        },
      },
      responses: {
        201: jsonResponse("The sandbox, with its credit token, shown once.", createdSandbox),
        ...errorResponses([422]),
      },
    }),
    async (c) => {
      // The body is optional: without one, the defaults.
      const body = createSandboxBody.parse(c.req.valid("json") ?? {});
      const ttl = body.ttl_seconds;
      const issued = issueCreditToken();
      const { accountId, tokenId } = issued.parts;
      const id = sandboxIdOf(accountId);
      const now = Date.now();
      const root = {
        token_id: tokenId,
        token_hash: issued.hash,
        label: `sandbox ${id}`,
        created_at: now,
        expires_at: now + ttl * 1000,
      };
      const account = accountStub(c.env, accountId);
      const opened = unwrap(
        await account.open({
          root,
          amount: SANDBOX_CREDIT_MICRO,
          ref: `sandbox:${id}`,
          requestId: c.get("requestId"),
          sandboxId: id,
        }),
      );
      try {
        await c.env.DB.prepare(
          "INSERT INTO credit_tokens (token_id, account_id, parent_id, token_hash, label, created_at, " +
            "expires_at) VALUES (?, ?, NULL, ?, ?, ?, ?)",
        )
          .bind(tokenId, accountId, issued.hash, root.label, now, root.expires_at)
          .run();
        const view = unwrap(
          await sandboxStub(c.env, id).open({
            id,
            accountId,
            tokenId,
            label: body.label,
            ttlMs: ttl * 1000,
            deliveries: body.deliveries,
          }),
        );
        return c.json({ ...viewBody(view), credit_token: issued.token, balance_usd: microToUsd(opened.balance) }, 201);
      } catch (err) {
        await account.void();
        throw err;
      }
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/sandboxes/{id}",
      operationId: "get_sandbox",
      ...SANDBOXES,
      summary: "A sandbox: its now, its resources",
      security: CREDIT,
      request: { params: sandboxIdParam },
      responses: { 200: jsonResponse("The sandbox.", sandboxView), ...errorResponses([401, 403, 404, 410]) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const cred = await sandboxCredential(c, id);
      return c.json(viewBody(unwrap(await sandboxStub(c.env, id).view(cred))), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/sandboxes/{id}",
      operationId: "end_sandbox",
      ...SANDBOXES,
      summary: "End a sandbox now, with every resource in it",
      security: CREDIT,
      request: { params: sandboxIdParam },
      responses: { 200: jsonResponse("The sandbox, ended.", sandboxView), ...errorResponses([401, 403, 404, 410]) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const cred = await sandboxCredential(c, id);
      return c.json(viewBody(unwrap(await sandboxStub(c.env, id).end(cred))), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/sandboxes/{id}/clock",
      operationId: "move_sandbox_clock",
      ...SANDBOXES,
      summary: "Move the sandbox's clock forward; everything due on the way fires, in order",
      description:
        "Send `advance_seconds` or `to`. Alarms, schedules (by their cron and time zone), dead-man states, " +
        "watch probes (one per simulated interval, against the real target), escalation steps and TTL " +
        "expiry fire in time order across the sandbox's resources. One call stops at its limits (firings, " +
        "steps, real time) with `more: true`; call again to go on.",
      security: CREDIT,
      request: {
        params: sandboxIdParam,
        body: {
          required: true,
          content: { "application/json": { schema: clockBody, example: { advance_seconds: 259200 } } },
        },
      },
      responses: {
        200: {
          description: "What fired, in order, and where the clock stopped.",
          content: { "application/json": { schema: clockAnswer, example: CLOCK_EXAMPLE } },
        },
        ...errorResponses([401, 403, 404, 409, 410, 422]),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const body = c.req.valid("json");
      const cred = await sandboxCredential(c, id);
      const move: ClockTarget =
        body.to !== undefined ? { to: Date.parse(body.to) } : { by: body.advance_seconds! * 1000 };
      return c.json(
        clockResult(
          unwrap(await sandboxStub(c.env, id).advance({ tokenId: cred.tokenId, tokenHash: cred.tokenHash, ...move })),
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/sandboxes/{id}/timeline",
      operationId: "sandbox_timeline",
      ...SANDBOXES,
      summary: "Every event of the sandbox, with its simulated time",
      security: CREDIT,
      request: { params: sandboxIdParam, query: z.object({ cursor: seqCursor, limit: pageLimit(100) }).strict() },
      responses: {
        200: jsonResponse("A page of events, oldest first.", timelineAnswer),
        ...errorResponses([401, 403, 404, 410, 422]),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const { cursor, limit } = c.req.valid("query");
      const cred = await sandboxCredential(c, id);
      const page = unwrap(await sandboxStub(c.env, id).timeline({ ...cred, after: Number(cursor ?? 0), limit }));
      return c.json({ items: page.items.map(eventBody), next_cursor: cursorOf(page.next_cursor) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/sandboxes/{id}/deliveries",
      operationId: "sandbox_deliveries",
      ...SANDBOXES,
      summary: "The requests its resources would have sent, when its deliveries go to its log",
      description:
        'A sandbox made with `deliveries: "log"` keeps each request its resources make here instead of ' +
        "sending it: as it would have gone (signed), with header values that may be credentials masked, " +
        "and the body, or its digest when large or stored; a secret body keeps neither.",
      security: CREDIT,
      request: { params: sandboxIdParam, query: z.object({ cursor: seqCursor, limit: pageLimit(100) }).strict() },
      responses: {
        200: {
          description: "A page of logged requests, oldest first.",
          content: { "application/json": { schema: deliveriesAnswer, example: DELIVERY_LOG_EXAMPLE } },
        },
        ...errorResponses([401, 403, 404, 410, 422]),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const { cursor, limit } = c.req.valid("query");
      const cred = await sandboxCredential(c, id);
      const page = unwrap(await sandboxStub(c.env, id).deliveries({ ...cred, after: Number(cursor ?? 0), limit }));
      return c.json({ items: page.items.map(loggedBody), next_cursor: cursorOf(page.next_cursor) }, 200);
    },
  );
}

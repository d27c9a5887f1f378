/**
 * Request and response shapes of stable addresses: a permanent public URL forwarding to a target
 * the agent can change (ngrok static domains, Hookdeck), buffering while there is none. The same
 * schemas validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { pageLimit, seqCursor } from "../../../openapi/schemas";
import { requestFields } from "../../../delivery/outbound";
import { MAX_PUBLIC_BODY_BYTES } from "../../../kind/public-face";

/** One request's body, forwarded or buffered: larger is 413, nothing kept. */
export const MAX_BODY_BYTES = MAX_PUBLIC_BODY_BYTES;
/** Requests waiting for a target at once: beyond, 507 until some are replayed or cleared. */
export const MAX_BUFFERED = 1000;
/** Their bodies together. */
export const MAX_BUFFERED_BYTES = 100 * 1024 * 1024;

export const MODES = ["proxy", "redirect"] as const;

const targetUrl = requestFields.url.nullable();
const mode = z
  .enum(MODES)
  .describe(
    "`proxy`: the request and its answer stream through this address (up to 10 MiB each way). `redirect`: " +
      "a 307 to the target, which the client follows.",
  );
const forwardPath = z
  .boolean()
  .describe(
    "Append the path below the address and the query to the target's (default); false sends every request " +
      "to the target as it is.",
  );

export const stableCreate = z
  .object({
    target_url: targetUrl
      .default(null)
      .describe("Where requests go; null (or absent): buffered until a target is set."),
    mode: mode.default("proxy"),
    forward_path: forwardPath.default(true),
  })
  .strict();
export type StableConfig = z.infer<typeof stableCreate>;

export const targetInput = z
  .object({
    target_url: targetUrl.describe(
      "The new target; null buffers requests from now on. Setting one replays what is buffered, in order, once each.",
    ),
    mode: mode.optional(),
    forward_path: forwardPath.optional(),
  })
  .strict();

export const BUFFER_STATUSES = ["waiting", "replaying", "delivered", "dead"] as const;
export type BufferStatus = (typeof BUFFER_STATUSES)[number];

export const bufferCounts = z.object({
  waiting: z.int().describe("Not sent yet."),
  replaying: z.int().describe("Being delivered to the target (retried until a 2xx on the service's schedule)."),
  delivered: z.int(),
  dead: z.int().describe("Gave up after the retries (see the deliveries log; it can be retried by hand)."),
  bytes: z.int().describe("Bodies of the requests still waiting."),
});

export const stableTarget = z.object({
  target_url: z.string().nullable(),
  mode: z.enum(MODES),
  forward_path: z.boolean(),
  target_set_at: z.string().nullable(),
});

export const stableInfo = stableTarget.extend({
  proxied: z.int().describe("Requests passed to the target as they came."),
  redirected: z.int(),
  buffered: bufferCounts,
});

export const bufferedRequest = z.object({
  seq: z.int(),
  received_at: z.string(),
  method: z.string(),
  path: z.string().describe("Below the address, with the query."),
  size: z.int(),
  status: z.enum(BUFFER_STATUSES),
  delivery_id: z.string().nullable().describe("Its replay in the attempt log (`GET /v1/stable/{id}/deliveries`)."),
});

export const bufferInput = z.object({
  status: z.enum(BUFFER_STATUSES).optional().describe("Only requests in this state."),
  cursor: seqCursor.describe("A previous page's next_cursor."),
  limit: pageLimit(20),
});
export const bufferPage = z.object({ items: z.array(bufferedRequest), next_cursor: z.string().nullable() });
export const cleared = z.object({ cleared: z.int().describe("Waiting requests dropped (replays under way finish).") });

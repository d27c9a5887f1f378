/**
 * Request and response shapes of front doors: a public URL where people and other agents leave
 * messages for an agent (Pushover's emergency receipts, PagerDuty's event acks). Each message is
 * kept, pushed to the agent's current endpoint until acknowledged, or pulled; the sender holds a
 * receipt to see what became of it. The same schemas validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { MAX_ATTEMPTS, MAX_RETRY_DELAY_SECONDS } from "../../../delivery/schedule";
import { pullCounts } from "../captures/pull";
import { singleLine } from "../../../openapi/schemas";

/** Messages one front door keeps, pending and acknowledged. */
export const MAX_ITEMS = 10_000;
/** Their bodies, in all. */
export const MAX_BYTES = 512 * 1024 * 1024;
/** One message's body: larger is 413, nothing kept. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/** What the page's form takes in its message field. */
export const MAX_FORM_CHARS = 20_000;
/** A push carries a body up to this size itself; a larger one by `body_url` (a signed link). */
export const PUSH_INLINE_BYTES = 32 * 1024;

const retryDelays = z
  .array(z.int().min(1).max(MAX_RETRY_DELAY_SECONDS))
  .max(MAX_ATTEMPTS - 1)
  .nullable()
  .describe("Seconds before each retry of a push; null: the service's schedule.");

export const endpointInput = z
  .object({
    url: requestFields.url
      .nullable()
      .describe(
        "Where messages are pushed from now on (signed with the resource's signing secret, retried until a " +
          "2xx); null: pull only.",
      ),
    retry_delays: retryDelays.default(null),
  })
  .strict();

export const frontdoorCreate = z
  .object({
    endpoint_url: requestFields.url
      .nullable()
      .default(null)
      .describe("Where messages are pushed; null (or absent): the agent pulls them."),
    name: singleLine(120)
      .min(1)
      .nullable()
      .default(null)
      .describe('Who the messages are for, as the page people open at the address says ("Leave a message for …").'),
    retry_delays: retryDelays.default(null),
  })
  .strict();
export type FrontdoorConfig = z.infer<typeof frontdoorCreate>;

export const endpoint = z.object({
  url: z.string().nullable(),
  retry_delays: z.array(z.int()).nullable(),
  set_at: z.string().nullable(),
});

export const PUSH_STATES = ["none", "pushing", "delivered", "failed", "cancelled"] as const;

export const frontdoorInfo = z.object({
  ...pullCounts,
  endpoint,
  pushes: z.object({
    pushing: z.int(),
    delivered: z.int(),
    failed: z.int().describe("Gave up after the retries: the message waits to be pulled."),
  }),
});

export const receipt = z.object({
  receipt_id: z.string(),
  received_at: z.string(),
  status: z
    .enum(["pending", "delivered", "acknowledged"])
    .describe(
      "`pending`: not taken yet; `delivered`: the agent's endpoint answered 2xx; `acknowledged`: the agent " +
        "acked it after pulling.",
    ),
  push: z
    .enum(PUSH_STATES)
    .describe(
      "The push to the agent's endpoint: none (no endpoint when it came), under way, delivered, failed " +
        "(pulled instead) or cancelled (acked first).",
    ),
  settled_at: z.string().nullable().describe("When it was delivered or acknowledged."),
});

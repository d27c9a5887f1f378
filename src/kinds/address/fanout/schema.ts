/**
 * Request and response shapes of fanout: one public URL whose requests go to every destination
 * (QStash URL groups, Hookdeck connections), each through the delivery pipeline with its own
 * retries and an optional filter. The same schemas validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { jsonValue, pageLimit, seqCursor } from "../../../openapi/schemas";
import { requestFields } from "../../../delivery/outbound";
import { MAX_ATTEMPTS, MAX_RETRY_DELAY_SECONDS } from "../../../delivery/schedule";
import { delivery } from "../../../delivery/schemas";
import { MAX_EXPRESSION_CHARS } from "../../../expressions/jsonata";
import { MAX_PUBLIC_BODY_BYTES } from "../../../kind/public-face";

/** Destinations one fanout sends to at once. */
export const MAX_DESTINATIONS = 20;
/** One request's body: larger is 413, nothing sent. */
export const MAX_MESSAGE_BYTES = MAX_PUBLIC_BODY_BYTES;
/** Bodies filters look into (larger ones, and bodies that are not JSON, pass only destinations without a filter). */
export const MAX_FILTERED_BYTES = 1024 * 1024;
/** Messages one fanout takes in its life. */
export const MAX_MESSAGES = 100_000;
/** Equality conditions in one filter. */
const MAX_EQUALS = 20;

export const filter = z
  .object({
    equals: z
      .record(z.string().min(1).max(200), jsonValue)
      .optional()
      .describe(
        `Fields (dotted paths into the JSON body, e.g. \`data.object.status\`) and the values they must ` +
          `equal; at most ${MAX_EQUALS}.`,
      ),
    jsonata: z
      .string()
      .min(1)
      .max(MAX_EXPRESSION_CHARS)
      .optional()
      .describe(
        "A JSONata predicate over the body (`$` is the body; `$headers`, `$method`, `$path` are bound): " +
          "the message passes when it yields `true`.",
      ),
  })
  .strict()
  .refine((f) => f.equals !== undefined || f.jsonata !== undefined, "give equals, jsonata or both")
  .refine((f) => Object.keys(f.equals ?? {}).length <= MAX_EQUALS, `at most ${MAX_EQUALS} equality conditions`)
  .openapi("FanoutFilter");
export type Filter = z.infer<typeof filter>;

export const destinationInput = z
  .object({
    url: requestFields.url,
    headers: requestFields.headers.describe("Added to (or replacing) the forwarded headers."),
    filter: filter
      .nullable()
      .default(null)
      .describe("Only messages that pass go to this destination (default: every message)."),
    retry_delays: z
      .array(z.int().min(1).max(MAX_RETRY_DELAY_SECONDS))
      .max(MAX_ATTEMPTS - 1)
      .nullable()
      .default(null)
      .describe(`Seconds before each retry (at most ${MAX_ATTEMPTS - 1}); null: the service's schedule.`),
  })
  .strict();
export type DestinationInput = z.infer<typeof destinationInput>;

export const fanoutCreate = z.object({
  destinations: z
    .array(destinationInput)
    .max(MAX_DESTINATIONS)
    .default([])
    .describe(`Where each request goes (at most ${MAX_DESTINATIONS}; add and remove them later too).`),
});
export type FanoutConfig = z.infer<typeof fanoutCreate>;

export const destinationStats = z.object({
  matched: z.int().describe("Messages that passed the filter and were sent here."),
  filtered_out: z.int(),
  filter_errors: z.int().describe("Messages whose JSONata filter failed to evaluate (not sent)."),
  pending: z.int(),
  delivered: z.int(),
  dead: z.int(),
  aborted: z.int(),
  redelivered: z
    .int()
    .describe(
      "Deliveries that took more than one attempt: the destination may have seen those more than once " +
        "(deduplicate by `webhook-id`).",
    ),
  attempts: z.int().describe("Attempts of the settled deliveries."),
});

export const destination = z
  .object({
    destination_id: z.string(),
    url: z.string(),
    headers: z.record(z.string(), z.string()),
    filter: filter.nullable(),
    retry_delays: z.array(z.int()).nullable(),
    added_at: z.string(),
    removed_at: z.string().nullable().describe("Removed destinations keep their statistics; nothing new goes to them."),
    stats: destinationStats,
  })
  .openapi("FanoutDestination");

export const destinationList = z.object({ destinations: z.array(destination) });

export const destinationIdParam = z.object({
  destination_id: z
    .string()
    .regex(/^dst_[0-9a-f]{16}$/, "must be a destination id (dst_…)")
    .describe("The destination's id."),
});

export const sendsInput = z.object({
  cursor: seqCursor.describe("A previous page's next_cursor."),
  limit: pageLimit(20),
});

export const sendsPage = z.object({
  items: z.array(
    z.object({
      message_seq: z.int(),
      received_at: z.string(),
      outcome: z.enum(["sent", "filtered_out", "filter_error"]),
      filter_error: z.string().nullable(),
      delivery: delivery
        .nullable()
        .describe("The delivery with its attempts (null when not sent, or once the log has let it go)."),
    }),
  ),
  next_cursor: z.string().nullable(),
});

export const fanoutInfo = z.object({
  messages: z.int(),
  last_seq: z.int(),
  destinations: z.int().describe("Active destinations."),
});

/**
 * Request and response shapes of notify resources: a set of channel URLs in Apprise's grammar
 * (./channels), kept sealed and shown redacted, and sends that fan out to every channel as
 * deliveries of the one pipeline. The same schemas validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { pageLimit, seqCursor, singleLine, httpUrl } from "../../../openapi/schemas";
import { delivery as deliverySchema } from "../../../delivery/schemas";
import { FORMATS, PRIORITIES } from "./channels/message";
import { CHANNELS } from "./channels/registry";

/** Channels one notify resource holds. */
export const MAX_CHANNELS = 50;
/** A channel URL. */
export const MAX_URL_CHARS = 2048;
/** A message's body (each channel clips to its provider's own limit). */
export const MAX_BODY_CHARS = 16_384;
/** Sends kept (older ones leave the list; their deliveries stay in the log as its retention says). */
export const MAX_SENDS = 10_000;

/** How some channels number the five priority levels. */
const PRIORITY_SCALES = "ntfy 1–5, Pushover −2…2, Opsgenie P5…P1, …";

/**
 * `scheme://…` with one of the channels' schemes, and no spaces or control characters: the pattern
 * the schema publishes, so a client builds a channel URL rather than any string. The generic JSON
 * webhook's schemes come first (what a client filling the pattern's first alternative writes).
 * Schemes are lower case, as Apprise writes them (a JSON Schema pattern has no flag to fold case).
 */
const schemes = [
  ...CHANNELS.filter((c) => c.schemes.includes("json")),
  ...CHANNELS.filter((c) => !c.schemes.includes("json")),
].flatMap((c) => c.schemes);
const CHANNEL_URL = new RegExp(
  `^(?:${schemes.map((s) => s.replace(/[.+]/g, "\\$&")).join("|")})://[^\\u0000-\\u0020\\u007f]+$`,
);

export const channelUrl = z
  .string()
  .min(1)
  .max(MAX_URL_CHARS)
  .regex(
    CHANNEL_URL,
    "must be scheme://… with a channel's scheme (GET /v1/notify/channels lists them), without spaces or " +
      "control characters",
  )
  .describe(
    "A channel in Apprise's URL grammar (`tgram://bot_token/chat_id`, `ntfys://ntfy.sh/topic`, …): `GET " +
      "/v1/notify/channels` lists them.",
  );

export const notifyCreate = z
  .object({
    channels: z
      .array(channelUrl)
      .min(1)
      .max(MAX_CHANNELS)
      .describe(`Up to ${MAX_CHANNELS} channel URLs. They carry credentials: kept encrypted, shown back redacted.`),
  })
  .strict();
export type NotifyConfig = z.infer<typeof notifyCreate>;

export const channelView = z.object({
  channel_id: z.string(),
  service: z.string(),
  scheme: z.string(),
  url: z.string().describe("The URL with its credentials masked."),
  added_at: z.string(),
});

export const channelList = z.object({ channels: z.array(channelView) });

export const addChannelInput = z.object({ url: channelUrl }).strict();

export const channelIdParam = z.object({ channel_id: z.string().max(64) });

export const sendInput = z
  .object({
    title: singleLine(250)
      .nullable()
      .default(null)
      .describe("Shown as the title where the channel has one, else as the first line."),
    body: z
      .string()
      .min(1)
      .max(MAX_BODY_CHARS)
      .describe("The message; converted to what each channel renders (see `format`)."),
    format: z
      .enum(FORMATS)
      .default("text")
      .describe(
        "What `body` is written in: text, markdown or html. Markdown is rendered to HTML for HTML " +
          "channels; HTML is reduced to text for text-only ones.",
      ),
    priority: z
      .enum(PRIORITIES)
      .default("normal")
      .describe(`Five levels, mapped onto each channel's own scale (${PRIORITY_SCALES}).`),
    tags: z
      .array(singleLine(64).min(1))
      .max(10)
      .default([])
      .describe("Tags, where the channel has them (ntfy's emoji tags, Opsgenie's tags)."),
    attach: httpUrl
      .nullable()
      .default(null)
      .describe(
        "A file's URL the channel shows or links where it takes one (an image in Discord, Telegram's " +
          "photo, ntfy's attachment).",
      ),
    channels: z
      .array(z.string().max(64))
      .max(MAX_CHANNELS)
      .nullable()
      .default(null)
      .describe("Only these channel ids; null: every channel."),
  })
  .strict();

const channelResult = z.object({
  channel_id: z.string(),
  service: z.string(),
  delivery_id: z.string(),
  status: z
    .string()
    .describe("The delivery's status: pending, retrying, delivered, dead (gave up after its retries) or aborted."),
  attempts: z.int(),
  last_error: z.string().nullable(),
  delivery: deliverySchema.nullable().describe("The delivery as the attempt log shows it (with `?detail=true`)."),
});

export const sendView = z.object({
  send_id: z.string(),
  created_at: z.string(),
  title: z.string().nullable(),
  source: z
    .string()
    .describe("`api`, or the id of the resource whose alert it relays (a dead-man switch, a form, an approval)."),
  summary: z.object({ delivered: z.int(), failed: z.int(), pending: z.int() }),
  results: z
    .array(channelResult)
    .describe("One per request made: per channel, and per recipient where the provider takes one a call."),
});

export const sendIdParam = z.object({ send_id: z.string().max(64) });
export const sendGetInput = z.object({
  detail: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .describe("Include each delivery with its attempts."),
  wait_seconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(30)
    .default(0)
    .describe("Wait up to this long for every channel's result (long-poll)."),
});

export const sendsInput = z.object({ limit: pageLimit(20), cursor: seqCursor });
export const sendsPage = z.object({ items: z.array(sendView), next_cursor: z.string().nullable() });

export const notifyInfo = z.object({
  channels: z.int(),
  sends: z.int(),
  deliveries: z.record(z.string(), z.int()).describe("Deliveries by status."),
});

/**
 * From a channel URL to what the delivery pipeline sends: the URL parsed by its scheme's
 * channel (a 422 naming the field when it does not fit the grammar), and each request the
 * channel makes for a message, sealed whole, since URL and headers carry the credentials.
 */
import { AppError } from "../../../../http/errors";
import { allowsPrivateTargets, checkEgressUrl } from "../../../../delivery/egress-guard";
import { isSmtp, smtpGuardUrl } from "../../../../delivery/smtp";
import { isDevelopment, type Env } from "../../../../env";
import type { OutgoingRequest } from "../../../../kind/kind";
import type { Channel, ChannelRequest } from "./channel";
import type { NotifyMessage } from "./message";
import { channelFor } from "./registry";
import { ChannelUrl, ChannelUrlError } from "./url";

export interface ReadChannel {
  channel: Channel;
  scheme: string;
  target: unknown;
  /** The URL with its credentials masked. */
  shown: string;
}

/** A message that exercises every part of a request, to check a new channel's targets at once. */
const PROBE: NotifyMessage = {
  title: "t",
  body: "b",
  format: "text",
  priority: "normal",
  tags: [],
  attach: null,
  id: "probe",
};

/** The channel's URL parsed by its scheme's channel: a 422 naming `field` when it does not fit the grammar. */
export function readChannel(raw: string, field: string): ReadChannel {
  try {
    const u = new ChannelUrl(raw);
    const channel = channelFor(u.scheme);
    if (!channel)
      throw new ChannelUrlError(`has a scheme no channel has (${u.scheme}://): GET /v1/notify/channels lists them`);
    return { channel, scheme: u.scheme, target: channel.parse(u), shown: u.shown() };
  } catch (err) {
    if (!(err instanceof ChannelUrlError)) throw err;
    const why = `the channel URL ${err.message}`;
    throw new AppError("validation_failed", `${field}: ${why}`, { errors: [{ path: field, message: why }] });
  }
}

/**
 * Read, and the requests it would make checked by the egress guard (a json:// URL at a private
 * address is refused): where a channel is given (create, add), not at each send, whose attempts
 * the guard checks again anyway.
 */
export function checkedChannel(env: Env, raw: string, field: string): ReadChannel {
  const read = readChannel(raw, field);
  for (const r of requestsOf(read.channel, read.target, PROBE))
    checkEgressUrl(isSmtp(r.url) ? smtpGuardUrl(r.url) : r.url, allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS), field);
  return read;
}

function requestsOf(channel: Channel, target: unknown, message: NotifyMessage): ChannelRequest[] {
  const out = channel.request(target, message);
  return Array.isArray(out) ? out : [out];
}

/** In tests, a provider's HTTPS endpoint is the local receiver: `{origin}/{host}{path}`. */
function testTarget(env: Env, url: string): string {
  if (!env.NOTIFY_TEST_ORIGIN || !isDevelopment(env) || !url.startsWith("https://")) return url;
  const u = new URL(url);
  return `${env.NOTIFY_TEST_ORIGIN}/${u.host}${u.pathname}${u.search}`;
}

/** The deliveries for one message through one channel. */
export function outgoing(env: Env, read: ReadChannel, message: NotifyMessage): OutgoingRequest[] {
  return requestsOf(read.channel, read.target, message).map((r) => ({
    url: testTarget(env, r.url),
    method: r.method,
    headers: r.headers,
    body: r.body,
    eventType: "notify.message",
    secret: { shownUrl: read.shown, ...(r.okWhen ? { okWhen: r.okWhen } : {}), ...(r.aws ? { aws: r.aws } : {}) },
  }));
}

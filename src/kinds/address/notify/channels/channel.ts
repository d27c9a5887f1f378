/**
 * The contract of one notify channel: its URL grammar (parsed into the channel's own target),
 * the HTTP request its provider's API expects for a message, and how to read the answer when
 * HTTP status alone does not say. A channel never sends anything itself: the kind hands the
 * request to the delivery pipeline (retries, the attempt log, dead letters), sealed, since the
 * URL and headers carry the channel's credentials.
 */
import type { AnswerCheck, AwsSigning } from "../../../../delivery/secret-requests";
import { toBase64, utf8 } from "../../../../bytes";
import type { ChannelUrl } from "./url";
import type { Format, NotifyMessage } from "./message";

export type Category = "chat" | "push" | "sms" | "email" | "incident" | "home" | "webhook";

export interface ChannelRequest {
  method: "GET" | "POST" | "PUT";
  url: string;
  headers: Record<string, string>;
  body: string | null;
  okWhen?: AnswerCheck;
  aws?: AwsSigning;
}

export interface Channel<Target = unknown> {
  /** Its schemes, the first the main one (`ntfy`, `ntfys`). */
  schemes: string[];
  service: string;
  category: Category;
  /** The URL grammar as the channel list shows it. */
  grammar: string;
  /** The provider's API reference the request follows. */
  docs: string;
  /** What it carries: a separate title, the richest body format, an attachment URL, priorities. */
  supports: { title: boolean; format: Format; attach: boolean; priority: boolean };
  /** Reads the URL (credentials through `u.secret`); throws ChannelUrlError naming what is wrong. */
  parse(u: ChannelUrl): Target;
  /**
   * The requests for one message: one, or one per recipient where the API takes one recipient a call
   * (each becomes a delivery of its own, so one refused recipient does not resend to the others).
   */
  request(target: Target, message: NotifyMessage): ChannelRequest | ChannelRequest[];
}

/** Declares a channel with its target type inferred from `parse`. */
export function channel<Target>(c: Channel<Target>): Channel<unknown> {
  return c as Channel<unknown>;
}

export function json(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  method: ChannelRequest["method"] = "POST",
): ChannelRequest {
  return { method, url, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) };
}

/** An `application/x-www-form-urlencoded` body; null and undefined fields are left out. */
export function form(
  url: string,
  fields: Record<string, string | number | null | undefined>,
  headers: Record<string, string> = {},
): ChannelRequest {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== null && v !== undefined) params.append(k, String(v));
  return {
    method: "POST",
    url,
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: params.toString(),
  };
}

/** A URL with query parameters; null and undefined ones are left out. */
export function withQuery(url: string, params: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) q.append(k, String(v));
  const s = q.toString();
  return s ? `${url}${url.includes("?") ? "&" : "?"}${s}` : url;
}

export const basic = (user: string, password: string) => `Basic ${toBase64(utf8(`${user}:${password}`))}`;
export const bearer = (token: string) => `Bearer ${token}`;
/** A path segment, percent-encoded. */
export const seg = encodeURIComponent;
/** An Authorization header, or none. */
export const authHeader = (value: string | null): Record<string, string> => (value ? { authorization: value } : {});

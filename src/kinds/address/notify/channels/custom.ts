/**
 * What Apprise's own webhook channels (json://, form://, xml://) share: the target is the URL
 * itself (http, or https for the `s` scheme), with `?+Name=value` adding a header, `?-name=value`
 * a query parameter of the request, `?:field=name` renaming a payload field (empty: dropped) or
 * adding one, and `?method=` choosing the method. Basic auth from the URL's user and password.
 */
import { CONNECTION_HEADERS, HEADER_NAME, isHeaderValue } from "../../../../http/header-fields";
import { basic, withQuery, type ChannelRequest } from "./channel";
import { level, type NotifyMessage } from "./message";
import { ChannelUrlError, type ChannelUrl } from "./url";

export interface CustomTarget {
  url: string;
  method: ChannelRequest["method"];
  headers: Record<string, string>;
  fields: Record<string, string>;
}

export function parseCustom(u: ChannelUrl): CustomTarget {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(u.prefixed("+"))) {
    if (!HEADER_NAME.test(name) || CONNECTION_HEADERS.test(name))
      throw new ChannelUrlError(`has a header it cannot send: ${name}`);
    if (!isHeaderValue(value)) throw new ChannelUrlError(`has a control character in header ${name}`);
    headers[name.toLowerCase()] = u.secret(value, `a value for header ${name}`);
  }
  if (u.user)
    headers.authorization = basic(u.secret(u.user, "a user"), u.password ? u.secret(u.password, "a password") : "");
  const method = (u.param("method") ?? "POST").toUpperCase();
  if (method !== "POST" && method !== "PUT" && method !== "GET")
    throw new ChannelUrlError("takes method POST, PUT or GET");
  const path = u.segments.map(encodeURIComponent).join("/");
  return { url: withQuery(`${u.origin()}/${path}`, u.prefixed("-")), method, headers, fields: u.prefixed(":") };
}

/** Apprise's message types, from the send's priority. */
export const messageType = (m: NotifyMessage) =>
  level(m.priority, ["info", "info", "info", "warning", "failure"] as const);

/** The payload with the URL's renames (`:title=subject`), drops (`:type=`) and additions applied. */
export function remap(payload: Record<string, unknown>, fields: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(payload)) {
    const to = k in fields ? fields[k]! : k;
    if (to) out[to] = v;
  }
  for (const [k, v] of Object.entries(fields)) if (!(k in payload)) out[k] = v;
  return out;
}

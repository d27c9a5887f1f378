/**
 * What SMS gateways share: phone numbers as Apprise writes them (digits, an optional leading +,
 * separators dropped), and one text from title and body, cut to what a multi-part SMS holds.
 */
import { clip, titled, type NotifyMessage } from "./message";
import { ChannelUrlError, type ChannelUrl } from "./url";

/** E.164 without separators: `+1 (555) 010-0200` → `+15550100200`. */
export function phone(raw: string): string {
  const digits = raw.replace(/[\s().-]/g, "");
  if (!/^\+?\d{6,15}$/.test(digits))
    throw new ChannelUrlError(`has a phone number it cannot read (${raw.replace(/\d(?=\d{3})/g, "•")})`);
  return digits;
}

/** The recipients: path segments (or `?to=`), at least one. */
export function phones(u: ChannelUrl, segments: string[]): string[] {
  const all = [...segments, ...(u.param("to") ?? "").split(",").filter(Boolean)];
  if (!all.length) throw new ChannelUrlError("needs a phone number to send to");
  return all.map(phone);
}

/** The SMS text: title and body, at most 1,600 characters (ten parts). */
export const smsText = (m: NotifyMessage, max = 1600) => clip(titled(m), max);

/** Without the leading +, as some gateways want it. */
export const bare = (p: string) => p.replace(/^\+/, "");

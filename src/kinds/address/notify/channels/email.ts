/**
 * What the e-mail APIs share: Apprise's two grammars for them, `scheme://api_key:from_user@domain/to…`
 * and `scheme://from_user@domain/api_key/to…` (without recipients, the sender gets the mail), and
 * a message as subject, text and HTML parts.
 */
import { asHtml, asText, type NotifyMessage } from "./message";
import { ChannelUrlError, type ChannelUrl } from "./url";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** An e-mail address as given, or a ChannelUrlError (the local part masked). */
export function address(raw: string): string {
  if (!EMAIL.test(raw))
    throw new ChannelUrlError(`has an e-mail address it cannot read (${raw.replace(/^[^@]*/, "…")})`);
  return raw;
}

export interface MailTarget {
  key: string;
  from: string;
  to: string[];
  /** The sender's display name (`?name=`). */
  name: string | null;
}

function recipients(u: ChannelUrl, segments: string[], from: string): string[] {
  const to = [...segments, ...(u.param("to") ?? "").split(",").filter(Boolean)].map(address);
  return to.length ? to : [from];
}

/** `api_key:from_user@domain/to…` (SendGrid, Postmark, Resend, Brevo, MailerSend …). */
export function keyThenFrom(u: ChannelUrl, what = "the API key"): MailTarget {
  const key = u.secret(u.user, what);
  const from = address(
    `${u.need(u.password, "the sender's user part (api_key:user@domain)")}@${u.need(u.host, "the sender's domain")}`,
  );
  return { key, from, to: recipients(u, u.segments, from), name: u.param("name", "from_name") };
}

/** `from_user@domain/api_key/to…` (Mailgun, SparkPost, SMTP2GO). */
export function fromThenKey(u: ChannelUrl, what = "the API key"): MailTarget {
  const from = address(`${u.need(u.user, "the sender's user part")}@${u.need(u.host, "the sender's domain")}`);
  return {
    key: u.secret(u.segments[0], what),
    from,
    to: recipients(u, u.segments.slice(1), from),
    name: u.param("name", "from_name"),
  };
}

export function subject(m: NotifyMessage): string {
  if (m.title) return m.title;
  const first = asText(m).split("\n")[0] ?? "";
  return first.length > 78 ? `${first.slice(0, 77)}…` : first || "Notification";
}

export const mailText = asText;
/** An HTML part only when the message was written with markup. */
export const mailHtml = (m: NotifyMessage) => (m.format === "text" ? null : asHtml(m));

/** `Name <address>` for APIs that take one string. */
export const named = (t: MailTarget) => (t.name ? `${t.name.replace(/["<>]/g, "")} <${t.from}>` : t.from);

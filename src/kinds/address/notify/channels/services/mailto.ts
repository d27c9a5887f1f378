import type { SmtpEnvelope } from "../../../../../delivery/smtp";
import { toBase64, utf8 } from "../../../../../bytes";
import { channel } from "../channel";
import { address, mailHtml, mailText, subject } from "../email";

/** A header value in RFC 2047's encoded-word form when it is not plain ASCII. */
const word = (v: string) => (/^[\x20-\x7e]*$/.test(v) ? v : `=?UTF-8?B?${toBase64(utf8(v))}?=`);
/** Base64 in lines of 76 (RFC 2045). */
const base64Lines = (text: string) => toBase64(utf8(text)).replace(/.{1,76}/g, "$&\r\n");

/**
 * Plain SMTP submission through Workers TCP sockets: mailto (STARTTLS, port 587) or mailtos (implicit TLS, port 465).
 */
export default channel({
  schemes: ["mailto", "mailtos"],
  service: "E-mail (SMTP submission)",
  category: "email",
  grammar: "mailto[s]://user:password@smtp_host[:port]/to_email[/…][?from=…&name=…]",
  docs: "https://www.rfc-editor.org/rfc/rfc6409",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse(u) {
    const user = u.need(u.user, "the SMTP user");
    const host = u.need(u.host, "the SMTP host");
    // Without ?from=, the sender is the login when it is an address, else user@host (as Apprise derives it).
    const from = address(u.param("from") ?? (user.includes("@") ? user : `${user}@${host}`));
    const to = (u.segments.length ? u.segments : [from]).map(address);
    const scheme = u.scheme === "mailtos" ? "smtps" : "smtp";
    return {
      url: `${scheme}://${host}${u.port ? `:${u.port}` : ""}`,
      user,
      password: u.secret(u.password, "the SMTP password"),
      from,
      name: u.param("name"),
      to,
    };
  },
  request(t, m) {
    const boundary = `zv-${m.id}`;
    const html = mailHtml(m);
    const head = [
      `From: ${t.name ? `${word(t.name)} <${t.from}>` : t.from}`,
      `To: ${t.to.join(", ")}`,
      `Subject: ${word(subject(m))}`,
      `Date: ${new Date().toUTCString().replace("GMT", "+0000")}`,
      `Message-ID: <${m.id}@zeitvault.invalid>`,
      "MIME-Version: 1.0",
    ];
    const part = (type: string, text: string) =>
      `Content-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64Lines(text)}`;
    const message = html
      ? `${head.join("\r\n")}\r\nContent-Type: multipart/alternative; boundary="${boundary}"\r\n\r\n--` +
        `${boundary}\r\n${part("text/plain", mailText(m))}--${boundary}\r\n${part("text/html", html)}--` +
        `${boundary}--\r\n`
      : `${head.join("\r\n")}\r\n${part("text/plain", mailText(m))}`;
    const envelope: SmtpEnvelope = { user: t.user, password: t.password, from: t.from, to: t.to, message };
    return { method: "POST", url: t.url, headers: {}, body: JSON.stringify(envelope) };
  },
});

/**
 * Mail submission over SMTP (RFC 5321, 6409) from a Worker, through TCP sockets
 * (`cloudflare:sockets`): implicit TLS (smtps, port 465) or STARTTLS (port 587), then AUTH PLAIN,
 * the envelope, and the message. Credentials never cross the wire in clear: a server that does
 * not offer STARTTLS is refused, except at a private address while private targets are allowed
 * (local development and tests, whose TLS a Worker would not trust). A notify channel's request
 * (sealed, like any) names `smtp://` or `smtps://` with the envelope and message in its body.
 */
import { toBase64, utf8 } from "../bytes";
import type { Env } from "../env";
import { allowsPrivateTargets, checkEgressUrl } from "./egress-guard";
import { AppError } from "../http/errors";
import { heard, openSocket } from "./sockets";

/** What an SMTP send carries in the sealed request's body. */
export interface SmtpEnvelope {
  user: string;
  password: string;
  from: string;
  to: string[];
  /** The RFC 5322 message, CRLF line ends. */
  message: string;
}

export const isSmtp = (url: string) => /^smtps?:\/\//i.test(url);

/** The URL the egress guard checks for an SMTP target: the same host rules as HTTP targets. */
export const smtpGuardUrl = (url: string) => `https://${new URL(url).hostname}/`;

const TIMEOUT_MS = 15_000;

class Reply extends Error {
  constructor(
    readonly code: number,
    readonly text: string,
  ) {
    super(`${code} ${text}`);
  }
}

/** Reads replies line by line from a socket's stream. */
class Lines {
  private buffer = "";
  private readonly decoder = new TextDecoder();
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  async reply(): Promise<Reply> {
    const lines: string[] = [];
    for (;;) {
      let nl = this.buffer.indexOf("\r\n");
      while (nl < 0) {
        const { value, done } = await this.reader.read();
        if (done) throw new Error("the server closed the connection");
        this.buffer += this.decoder.decode(value, { stream: true });
        if (this.buffer.length > 64 * 1024) throw new Error("the server's reply is too long");
        nl = this.buffer.indexOf("\r\n");
      }
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 2);
      lines.push(line.slice(4));
      if (line[3] !== "-") return new Reply(Number(line.slice(0, 3)), lines.join(" "));
    }
  }
}

/** Lines starting with a dot get another (RFC 5321 §4.5.2); the message ends with CRLF.CRLF. */
const dotStuffed = (message: string) => `${message.replace(/\r?\n/g, "\r\n").replace(/^\./gm, "..")}\r\n.\r\n`;

export async function sendSmtp(env: Env, url: string, envelope: SmtpEnvelope): Promise<{ code: number; text: string }> {
  const target = new URL(url);
  const implicit = target.protocol === "smtps:";
  const port = Number(target.port || (implicit ? 465 : 587));
  // The same guard as HTTP targets: no loopback, metadata or private addresses in production.
  const host = checkEgressUrl(smtpGuardUrl(url), allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS), "url").hostname;
  let socket = await openSocket(
    { hostname: host, port },
    { secureTransport: implicit ? "on" : "starttls", allowHalfOpen: false },
  );
  const timer = setTimeout(() => void socket.close().catch(() => undefined), TIMEOUT_MS);
  try {
    let writer = socket.writable.getWriter();
    let lines = new Lines(socket.readable.getReader());
    const expect = async (ok: (code: number) => boolean) => {
      const r = await lines.reply();
      if (!ok(r.code)) throw r;
      return r;
    };
    const say = async (line: string, ok: (code: number) => boolean) => {
      await writer.write(utf8(`${line}\r\n`));
      return expect(ok);
    };
    const is2 = (c: number) => c >= 200 && c < 300;
    await expect((c) => c === 220);
    let ehlo = await say("EHLO zeitvault.invalid", is2);
    if (!implicit) {
      if (/\bSTARTTLS\b/i.test(ehlo.text)) {
        await say("STARTTLS", (c) => c === 220);
        writer.releaseLock();
        socket = heard(socket.startTls());
        writer = socket.writable.getWriter();
        lines = new Lines(socket.readable.getReader());
        ehlo = await say("EHLO zeitvault.invalid", is2);
      } else if (!allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS)) {
        throw new AppError("upstream_failed", "the SMTP server offers no STARTTLS: credentials are not sent in clear");
      }
    }
    await say(`AUTH PLAIN ${toBase64(utf8(`\u0000${envelope.user}\u0000${envelope.password}`))}`, (c) => c === 235);
    await say(`MAIL FROM:<${envelope.from}>`, is2);
    for (const to of envelope.to) await say(`RCPT TO:<${to}>`, is2);
    await say("DATA", (c) => c === 354);
    await writer.write(utf8(dotStuffed(envelope.message)));
    const accepted = await expect(is2);
    await writer.write(utf8("QUIT\r\n")).catch(() => undefined);
    return { code: accepted.code, text: accepted.text };
  } finally {
    clearTimeout(timer);
    await socket.close().catch(() => undefined);
  }
}

/** An SMTP reply code or error as the attempt log reads it: 5xx is final (no retry helps), the rest may pass. */
export function smtpFailure(err: unknown): { permanent: boolean; statusCode: number | null; error: string } {
  if (err instanceof Reply)
    return { permanent: err.code >= 500, statusCode: err.code, error: `SMTP ${err.code} ${err.text}`.slice(0, 500) };
  if (err instanceof AppError) return { permanent: true, statusCode: null, error: err.detail };
  return { permanent: false, statusCode: null, error: err instanceof Error ? err.message : String(err) };
}

/**
 * A real SMTP submission server for tests (nodemailer's smtp-server, on loopback): it requires
 * AUTH (PLAIN or LOGIN) with the password "smtp-test-password", takes any envelope, and keeps
 * each message (envelope, the user who authenticated, the raw RFC 5322 text) for the tests to
 * read at GET {logUrl}. It offers no STARTTLS (a Worker's TLS would not trust a local
 * certificate): the worker sends in clear only to private addresses in development.
 */
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface SmtpMessage {
  user: string;
  from: string;
  to: string[];
  data: string;
}

export async function startSmtp(): Promise<{ host: string; logUrl: string; stop(): Promise<void> }> {
  const messages: SmtpMessage[] = [];
  const smtp = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    authMethods: ["PLAIN", "LOGIN"],
    onAuth(auth, _session, done) {
      if (auth.password === "smtp-test-password") done(null, { user: auth.username });
      else done(new Error("535 authentication failed"));
    },
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        messages.push({
          user: String(session.user),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString("utf8"),
        });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const http = createHttpServer(
    (_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(messages)),
  );
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  return {
    host: `127.0.0.1:${smtpPort}`,
    logUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}/`,
    stop: async () => {
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

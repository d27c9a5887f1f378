/**
 * The soak's outside world (bench/soak.mjs), besides its webhook receiver: the S3-compatible server transfers copy
 * between, the SMTP server notify's mailto:// channel sends to, and an HTTP target whose health flips at random for
 * watches. The first two are the test suite's peers (test/peers/s3.ts, test/peers/smtp.ts: s3rver and nodemailer's
 * smtp-server on loopback), started here from plain Node the way bench/transfers.mjs starts s3rver; the service
 * needs no setting for them (TEST_S3 and TEST_SMTP tell the tests where they are, not the worker): a transfer or a
 * channel names its endpoint, and ALLOW_PRIVATE_TARGETS lets the worker reach loopback.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { AwsClient } from "aws4fetch";
import S3rver from "s3rver";
import { SMTPServer } from "smtp-server";

/**
 * s3rver with one bucket holding `seeds` objects (`seed/{n}.bin`, 64 KiB–1 MiB, one part each); `digest(key)`
 * answers `{ size, sha256 }` of what the bucket holds, or null.
 */
export async function startS3Peer({ seeds = 4 } = {}) {
  const directory = await mkdtemp(path.join(tmpdir(), "zv-soak-s3-"));
  const bucket = "soak";
  const s3 = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
    vhostBuckets: false,
  });
  const { port } = await s3.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new AwsClient({
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    service: "s3",
    region: "us-east-1",
  });
  const seeded = [];
  for (let n = 0; n < seeds; n++) {
    const body = Buffer.alloc(65536 << Math.min(n, 4));
    for (let i = 0; i < body.length; i += 4) body.writeUInt32LE((Math.imul(i + n, 2654435761) >>> 0) % 2 ** 32, i);
    const key = `seed/${n}.bin`;
    const put = await client.fetch(`${endpoint}/${bucket}/${key}`, { method: "PUT", body });
    if (!put.ok) throw new Error(`s3 seed ${key}: ${put.status}`);
    seeded.push({ key, size: body.length, sha256: createHash("sha256").update(body).digest("hex") });
  }
  const credentials = { access_key_id: "S3RVER", secret_access_key: "S3RVER" };
  return {
    seeded,
    /** A transfer endpoint (the body's `source` or `destination`) for `key`. */
    at: (key) => ({ type: "s3", endpoint, bucket, key, ...credentials }),
    async digest(key) {
      const res = await client.fetch(`${endpoint}/${bucket}/${key}`);
      if (!res.ok) return null;
      const body = Buffer.from(await res.arrayBuffer());
      return { size: body.length, sha256: createHash("sha256").update(body).digest("hex") };
    },
    async stop() {
      await s3.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * An SMTP submission server (AUTH PLAIN or LOGIN, password `soak-password`, no STARTTLS: the worker sends in clear
 * only to private addresses in development); `subjects` counts the messages received by Subject.
 */
export async function startSmtpPeer() {
  const subjects = new Map();
  const smtp = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    authMethods: ["PLAIN", "LOGIN"],
    logger: false,
    onAuth(auth, _session, done) {
      if (auth.password === "soak-password") done(null, { user: auth.username });
      else done(new Error("535 authentication failed"));
    },
    onData(stream, _session, done) {
      const chunks = [];
      stream.on("data", (c) => chunks.push(c));
      stream.on("end", () => {
        const subject = /^Subject: (.*)$/m.exec(Buffer.concat(chunks).toString("utf8"))?.[1]?.trim() ?? "";
        subjects.set(subject, (subjects.get(subject) ?? 0) + 1);
        done();
      });
    },
  });
  await new Promise((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${smtp.server.address().port}`;
  return {
    subjects,
    /** The notify channel that mails `to` through this server. */
    channel: (to) => `mailto://soak:soak-password@${host}/${to}`,
    stop: () => new Promise((resolve) => smtp.close(() => resolve())),
  };
}

/**
 * Health-check targets for watches: `GET /h/{key}` answers 200 while the key is up and 503 while it is down; each
 * key starts up and flips every `flip` seconds (a [min, max] range, drawn anew at each flip). Every answer is kept
 * (`answers(key)`: `{ t, status }` in order), so a watch's recorded checks can be held against them.
 */
export async function startFlappingTarget({ flip = [40, 150] } = {}) {
  const keys = new Map(); // key → { up, flipAt, answers }
  const nextFlip = () => Date.now() + (flip[0] + Math.random() * (flip[1] - flip[0])) * 1000;
  const server = createServer((req, res) => {
    const key = /^\/h\/([\w-]+)/.exec(req.url ?? "")?.[1];
    if (!key) return res.writeHead(404).end();
    const k = keys.get(key) ?? { up: true, flipAt: nextFlip(), answers: [] };
    keys.set(key, k);
    while (Date.now() >= k.flipAt) ((k.up = !k.up), (k.flipAt = nextFlip()));
    const status = k.up ? 200 : 503;
    k.answers.push({ t: Date.now(), status });
    res.writeHead(status, { "content-type": "text/plain" }).end(k.up ? "up" : "down");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    answers: (key) => keys.get(key)?.answers ?? [],
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

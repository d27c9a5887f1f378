/**
 * notify, per issue 14 and docs/kinds.md: channel URLs checked at create (422 naming the one that
 * does not parse, nothing charged), kept sealed and only ever shown redacted; a send fans out
 * to every channel as its own delivery through the one pipeline, answers at once, and reports
 * each channel's result (long-poll until all are settled); a provider that answers 2xx but says
 * no in its body (Slack's `ok: false`) counts as failed; ten channels with three failing
 * receivers deliver seven and report three, nothing lost. The channel list is free.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { notify } from "../../../src/kinds/address/notify";
import { CHANNELS } from "../../../src/kinds/address/notify/channels/registry";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  managed,
  opsOn,
  type Delivery,
  type DeliveryPage,
} from "../../harness";

const receiver = env.TEST_RECEIVER_URL;
const H = new URL(receiver).host;
const unique = () => crypto.randomUUID().slice(0, 8);

async function notifyWith(channels: string[]) {
  const { token } = await buyCredits(2);
  const created = await createResource("notify", token, { channels });
  return { ...created, token, ...opsOn(notify, created.id, created.mgmt, token) };
}

async function settled(n: Awaited<ReturnType<typeof notifyWith>>, sendId: string) {
  for (let i = 0; i < 20; i++) {
    const got = await n.ok("get_send", `/sends/${sendId}?wait_seconds=10`);
    if (got.summary.pending === 0) return got;
  }
  throw new Error("the send never settled");
}

describe("notify", () => {
  it("lists every channel with its grammar, free and without credentials", async () => {
    const res = await call("GET", "/v1/notify/channels");
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      count: number;
      channels: { service: string; schemes: string[]; grammar: string; supports: { format: string } }[];
    };
    expect(body.count).toBe(CHANNELS.length);
    expect(body.count).toBeGreaterThanOrEqual(100);
    expect(body.channels.find((c) => c.schemes.includes("tgram"))).toMatchObject({
      service: "Telegram",
      grammar: expect.stringContaining("tgram://bot_token/chat_id"),
      supports: { format: "html" },
    });
  });

  it("keeps channel URLs sealed, shows them redacted: the record, the list, the log, the export, storage", async () => {
    const secrets = [
      "123456:tgSealedSecretToken",
      "T1/B1/slackSealedWebhookSecret",
      "pushoverSealedAppToken",
      "sgSealedApiKey",
    ];
    const n = await notifyWith([
      `tgram://${secrets[0]}/42`,
      `slack://${secrets[1]}`,
      `pover://someUserKey@${secrets[2]}`,
      `sendgrid://${secrets[3]}:alerts@example.com/ops@example.com`,
    ]);
    const { send_id } = await n.ok("send", "/sends", { body: "hello" });
    await settled(n, send_id);
    const shown = [
      JSON.stringify(n.record),
      JSON.stringify(await n.ok("list_channels", "/channels")),
      JSON.stringify(await n.ok("get_send", `/sends/${send_id}?detail=true`)),
      await (await call("GET", `/v1/notify/${n.id}/deliveries`, { headers: managed(n.mgmt) })).text(),
      await (await call("GET", `/v1/resources/${n.id}/export`, { headers: managed(n.mgmt) })).text(),
    ].join("\n");
    expect(shown).toContain("tgram://12****/42");
    expect(shown).toContain("sendgrid://sg****:alerts@example.com/ops@example.com");
    const stored = await runInDurableObject(env.RESOURCES.get(env.RESOURCES.idFromName(n.id)), (_o, state) => {
      const tables = state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
        )
        .toArray();
      return tables
        .map((t) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM "${t.name}"`).toArray()))
        .join("\n");
    });
    const d1 = JSON.stringify((await env.DB.prepare("SELECT * FROM resources WHERE id = ?").bind(n.id).all()).results);
    for (const s of secrets) {
      const core = s.slice(s.length - 14);
      expect(shown, s).not.toContain(core);
      expect(stored, s).not.toContain(core);
      expect(d1, s).not.toContain(core);
    }
    expect(stored).toContain("tgram://12****/42"); // the scan did read the kind's tables
  });

  it("refuses URLs it cannot read with a 422 naming the channel, before charging", async () => {
    const { token } = await buyCredits(1);
    const before = await balanceOf(token);
    const refused = async (channels: unknown, path: string, detail: RegExp) => {
      const res = await call("POST", "/v1/notify", {
        body: { channels },
        headers: { authorization: `Bearer ${token}` },
      });
      const body = await res.text();
      expect(res.status, body).toBe(422);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const problem = JSON.parse(body) as { errors: { path: string; message: string }[] };
      expect(problem.errors[0]).toMatchObject({ path });
      expect(problem.errors[0]!.message).toMatch(detail);
      expect(body).not.toContain("SECRETVALUE");
    };
    await refused(
      ["ntfy://ok-topic", "nosuch://SECRETVALUE"],
      "channels.1",
      /with a channel's scheme \(GET \/v1\/notify\/channels lists them\)/,
    );
    await refused(["tgram://SECRETVALUE"], "channels.0", /needs a chat id/);
    await refused(["slack://onlyone"], "channels.0", /needs token B/);
    await refused(["twilio://AC1:SECRETVALUE@+1555/notanumber"], "channels.0", /phone number/);
    await refused(["sendgrid://SECRETVALUE:alerts@example.com/not-an-email"], "channels.0", /e-mail address/);
    await refused(["json://host:99999/x"], "channels.0", /port/);
    await refused(["json://host/x?+Bad%0AHeader=v"], "channels.0", /header/);
    await refused(["json://host/x?+X-Key=a%0Db"], "channels.0", /control character/);
    await refused(["not a url"], "channels.0", /without spaces/);
    await refused(["tgram://1:SECRETVALUE/%zz"], "channels.0", /percent-encoding/);
    await refused([], "channels", /.+/);
    await refused(
      Array.from({ length: 51 }, (_, i) => `ntfy://t${i}`),
      "channels",
      /.+/,
    );
    await refused(["ntfy://\u0000topic"], "channels.0", /control|spaces/);
    expect(await balanceOf(token)).toEqual(before);
  });

  it("sends to ten channels, three failing: seven delivered, three retried and reported; none lost", async () => {
    const tag = unique();
    const ok = Array.from({ length: 7 }, (_, i) => `json://${H}/ok/notify-ok-${tag}-${i}`);
    const down = Array.from({ length: 3 }, (_, i) => `json://${H}/down/notify-down-${tag}-${i}`);
    const n = await notifyWith([...ok, ...down]);
    const sent = await n.ok("send", "/sends", { title: "Deploy", body: "v2 is live", priority: "low" });
    expect(sent.results).toHaveLength(10);
    const result = await settled(n, sent.send_id);
    expect(result.summary).toEqual({ delivered: 7, failed: 3, pending: 0 });
    for (const r of result.results.filter((x) => x.status !== "delivered")) {
      expect(r.status).toBe("dead");
      expect(r.attempts).toBeGreaterThan(1);
      expect(r.last_error).toBe("HTTP 500");
    }
    for (let i = 0; i < 7; i++) {
      const hits = (await (await fetch(`${receiver}/_log/notify-ok-${tag}-${i}`)).json()) as { body: string }[];
      expect(hits.length).toBe(1);
      expect(JSON.parse(hits[0]!.body)).toMatchObject({ title: "Deploy", message: "v2 is live", type: "info" });
    }
    // A failed channel's delivery can be sent again by hand, as any delivery can.
    const dead = result.results.find((r) => r.status === "dead")!;
    const retried = await call("POST", `/v1/notify/${n.id}/deliveries/${dead.delivery_id}/retry`, {
      headers: managed(n.mgmt),
    });
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ id: dead.delivery_id, status: "pending" });
  });

  it("counts a 2xx that says no in its body as failed (Slack's ok: false), and says why", async () => {
    const n = await notifyWith(["slack://xoxb-refusing-bot/#zv-refuse"]);
    const { send_id } = await n.ok("send", "/sends", { body: "will be refused" });
    const r = (await settled(n, send_id)).results[0]!;
    expect(r.status).toBe("dead");
    expect(r.last_error).toBe("the provider refused it: ok is false, not true");
  });

  it("sends to chosen channels, adds and removes channels, long-polls a send, refuses what it cannot do", async () => {
    const tag = unique();
    const n = await notifyWith([`json://${H}/ok/notify-a-${tag}`]);
    const added = await n.ok("add_channel", "/channels", { url: `form://${H}/ok/notify-b-${tag}` });
    expect(added).toMatchObject({ service: "Form webhook", scheme: "form" });
    const only = await n.ok("send", "/sends", { body: "just b", channels: [added.channel_id] });
    expect(only.results.map((r) => r.channel_id)).toEqual([added.channel_id]);
    expect((await settled(n, only.send_id)).summary).toEqual({ delivered: 1, failed: 0, pending: 0 });
    const hits = (await (await fetch(`${receiver}/_log/notify-b-${tag}`)).json()) as { body: string }[];
    expect(Object.fromEntries(new URLSearchParams(hits[0]!.body))).toMatchObject({ message: "just b" });

    const list = await n.ok("list_sends", "/sends");
    expect(list.items.map((s) => s.send_id)).toEqual([only.send_id]);
    expect((await n.refused("send", "/sends", { body: "x", channels: ["ch_nope"] })).status).toBe(422);
    expect((await n.refused("get_send", "/sends/snd_nope")).status).toBe(404);
    expect((await n.refused("add_channel", "/channels", { url: "nosuch://x" })).status).toBe(422);
    expect((await n.refused("send", "/sends", { body: "" })).status).toBe(422);
    expect((await n.refused("send", "/sends", { body: "x", format: "rtf" })).status).toBe(422);
    expect((await n.refused("send", "/sends", { body: "x", attach: "ftp://example.com/a.png" })).status).toBe(422);
    expect((await n.refused("send", "/sends", { body: "x", title: "two\nlines" })).status).toBe(422);
    expect((await n.refused("send", "/sends", { body: "x".repeat(16_385) })).status).toBe(422);

    const after = await n.ok("remove_channel", `/channels/${added.channel_id}`);
    expect(after.channels).toHaveLength(1);
    expect((await n.refused("remove_channel", `/channels/${added.channel_id}`)).status).toBe(404);
    await n.ok("remove_channel", `/channels/${after.channels[0]!.channel_id}`);
    expect((await n.refused("send", "/sends", { body: "nobody" })).status).toBe(409);
    expect(await n.ok("info", "")).toMatchObject({ channels: 0, sends: 1 });
  });

  it(
    "is the alert target of a dead-man switch: its down and up alerts reach every channel, once each, " +
      "and only the owner can name it",
    async () => {
      const tag = unique();
      const n = await notifyWith([`json://${H}/ok/notify-deadman-${tag}`, `form://${H}/ok/notify-deadman-form-${tag}`]);
      const refused = await call("POST", "/v1/deadman", {
        body: { period_seconds: 3600, alert_notify: "zvm_notarealtoken" },
        headers: { authorization: `Bearer ${n.token}` },
      });
      expect(refused.status).toBe(422);
      const other = await createResource("counters", n.token);
      const wrongKind = await call("POST", "/v1/deadman", {
        body: { period_seconds: 3600, alert_notify: other.mgmt },
        headers: { authorization: `Bearer ${n.token}` },
      });
      expect(((await wrongKind.json()) as { errors: { path: string }[] }).errors[0]!.path).toBe("alert_notify");

      const d = await createResource("deadman", n.token, {
        period_seconds: 3600,
        grace_seconds: 600,
        alert_notify: n.mgmt,
      });
      expect(d.record.config).toMatchObject({ alert_notify: n.id, alert_url: null });
      expect(JSON.stringify(d.record)).not.toContain(n.mgmt);
      const ping = new URL(d.record.urls.public as string).pathname;
      expect((await call("GET", ping)).status).toBe(200);
      await advance(d.id, 3600_000 + 600_000 + 1000);
      const log = async (name: string) =>
        (await (await fetch(`${receiver}/_log/${name}`)).json()) as { body: string }[];
      let hits: { body: string }[] = [];
      for (let i = 0; i < 100 && hits.length < 1; i++) {
        hits = await log(`notify-deadman-${tag}`);
        if (!hits.length) await new Promise((r) => setTimeout(r, 100));
      }
      expect(JSON.parse(hits[0]!.body)).toMatchObject({
        title: `Dead-man switch ${d.id} is down`,
        message: expect.stringContaining("1 missed run(s)"),
        type: "warning",
      });
      expect((await call("POST", ping, { body: "back", headers: { "content-type": "text/plain" } })).status).toBe(200);
      for (let i = 0; i < 100 && hits.length < 2; i++) {
        hits = await log(`notify-deadman-${tag}`);
        if (hits.length < 2) await new Promise((r) => setTimeout(r, 100));
      }
      expect(JSON.parse(hits[1]!.body)).toMatchObject({ title: `Dead-man switch ${d.id} is up again`, type: "info" });
      const sends = await n.ok("list_sends", "/sends");
      expect(sends.items.map((x) => [x.source, x.title])).toEqual([
        [d.id, `Dead-man switch ${d.id} is up again`],
        [d.id, `Dead-man switch ${d.id} is down`],
      ]);
      await new Promise((r) => setTimeout(r, 1100));
      expect(await log(`notify-deadman-${tag}`)).toHaveLength(2);
      expect(await log(`notify-deadman-form-${tag}`)).toHaveLength(2);
    },
  );

  it("stops relaying to an ended notify resource: the alert's delivery is aborted, not retried forever", async () => {
    const n = await notifyWith([`json://${H}/ok/notify-ended-${unique()}`]);
    const d = await createResource("deadman", n.token, {
      period_seconds: 3600,
      grace_seconds: 0,
      alert_notify: n.mgmt,
    });
    expect((await call("GET", new URL(d.record.urls.public as string).pathname)).status).toBe(200);
    expect((await call("DELETE", `/v1/resources/${n.id}`, { headers: managed(n.mgmt) })).status).toBe(200);
    await advance(d.id, 3600_000 + 1000);
    let relay: Delivery | undefined;
    for (let i = 0; i < 100 && relay?.status !== "aborted"; i++) {
      const log = (await (
        await call("GET", `/v1/deadman/${d.id}/deliveries`, { headers: managed(d.mgmt) })
      ).json()) as DeliveryPage;
      relay = log.items.find((x) => x.event_type === "notify.relay");
      if (relay?.status !== "aborted") await new Promise((r) => setTimeout(r, 100));
    }
    expect(relay).toMatchObject({ url: `zeitvault://resources/${n.id}`, status: "aborted", attempts: 1 });
    expect(relay!.attempt_log[0]).toMatchObject({ outcome: "aborted", error: "The resource has ended." });
  });

  it("sends mailto:// by SMTP to a real server: AUTH, envelope, MIME text + HTML; refused login is final", async () => {
    const smtp = env.TEST_SMTP;
    const n = await notifyWith([
      `mailto://ada%40example.com:smtp-test-password@${smtp.host}/ops@example.com/second.reader@example.com` +
        `?name=Zeitvault%20Alerts`,
    ]);
    expect((await n.ok("list_channels", "/channels")).channels[0]!.url).not.toContain("smtp-test-password");
    const { send_id } = await n.ok("send", "/sends", {
      title: "Disk fast voll ✓",
      body: "**92%** used\n.\nend",
      format: "markdown",
    });
    const sentMail = await settled(n, send_id);
    expect(sentMail.summary, JSON.stringify(sentMail.results)).toEqual({ delivered: 1, failed: 0, pending: 0 });
    const mails = (await (await fetch(smtp.logUrl)).json()) as {
      user: string;
      from: string;
      to: string[];
      data: string;
    }[];
    const mail = mails.find((m) => m.data.includes(`Message-ID: <${send_id}@`))!;
    expect(mail).toMatchObject({
      user: "ada@example.com",
      from: "ada@example.com",
      to: ["ops@example.com", "second.reader@example.com"],
    });
    expect(mail.data).toContain(
      `Subject: =?UTF-8?B?${btoa(String.fromCharCode(...new TextEncoder().encode("Disk fast voll ✓")))}?=`,
    );
    expect(mail.data).toContain("From: Zeitvault Alerts <ada@example.com>");
    const parts = [
      ...mail.data.matchAll(
        /Content-Type: (text\/\w+); charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n([A-Za-z0-9+/=\r\n]+)/g,
      ),
    ].map((p) => [
      p[1],
      new TextDecoder().decode(Uint8Array.from(atob(p[2]!.replace(/\r\n/g, "")), (c) => c.charCodeAt(0))),
    ]);
    expect(parts).toEqual([
      ["text/plain", "92% used\n.\nend"],
      ["text/html", "<p><strong>92%</strong> used<br>.<br>end</p>"],
    ]);

    const wrong = await notifyWith([`mailto://ada%40example.com:not-the-password@${smtp.host}/ops@example.com`]);
    const refused = await wrong.ok("send", "/sends", { body: "x" });
    const r = (await settled(wrong, refused.send_id)).results[0]!;
    expect(r).toMatchObject({ status: "aborted", attempts: 1 });
    expect(r.last_error).toMatch(/^SMTP 535/);
  });

  it(
    "writes Slack's mrkdwn: Markdown converted as Apprise does (**b** → *b*, [t](u) → <u|t>), " +
      "and &, <, > escaped everywhere but in the links it makes",
    async () => {
      const hook = `slk${unique()}`;
      const n = await notifyWith([`slack://T0001/B0001/${hook}`]);
      const markdown = await n.ok("send", "/sends", {
        title: "Q&A <ops>",
        format: "markdown",
        body:
          "Deploy **v2** & <rollback> [the log](https://ci.example/run?id=1&x=2), see `a<b` and _why_\n\n- " +
          "one\n- **two**",
      });
      await settled(n, markdown.send_id);
      const plain = await n.ok("send", "/sends", { body: "a & b <c> **not bold**" });
      await settled(n, plain.send_id);
      const log = (await (await fetch(`${receiver}/_log/notify`)).json()) as { path: string; body: string }[];
      const texts = log
        .filter((r) => r.path.endsWith(`/hooks.slack.com/services/T0001/B0001/${hook}`))
        .map((r) => (JSON.parse(r.body) as { text: string }).text);
      expect(texts).toEqual([
        "*Q&amp;A &lt;ops&gt;*\nDeploy *v2* &amp; &lt;rollback&gt; <https://ci.example/run?id=1&amp;x=2|the " +
          "log>, see `a&lt;b` and _why_\n• one\n• *two*",
        "a &amp; b &lt;c&gt; **not bold**",
      ]);
    },
  );

  it(
    "honours Telegram's ?silent= (yes/true/no/false, as Apprise reads it) over the priority's default, " +
      "and ?preview=",
    async () => {
      const bot = `123456:tg${unique()}`;
      const n = await notifyWith([
        `tgram://${bot}/1?silent=yes`,
        `tgram://${bot}/2?silent=true`,
        `tgram://${bot}/3?silent=no&preview=no`,
        `tgram://${bot}/4?silent=false`,
        `tgram://${bot}/5`,
      ]);
      for (const priority of ["normal", "low"]) {
        const { send_id } = await n.ok("send", "/sends", { body: `at ${priority}`, priority });
        await settled(n, send_id);
      }
      const log = (await (await fetch(`${receiver}/_log/notify`)).json()) as { path: string; body: string }[];
      const sent = log
        .filter((r) => r.path.includes(`/bot${bot}/`))
        .map(
          (r) =>
            JSON.parse(r.body) as {
              chat_id: string;
              text: string;
              disable_notification: boolean;
              disable_web_page_preview?: boolean;
            },
        );
      const silentAt = (priority: string) =>
        Object.fromEntries(
          sent.filter((b) => b.text === `at ${priority}`).map((b) => [b.chat_id, b.disable_notification]),
        );
      expect(silentAt("normal")).toEqual({ 1: true, 2: true, 3: false, 4: false, 5: false });
      expect(silentAt("low")).toEqual({ 1: true, 2: true, 3: false, 4: false, 5: true });
      expect(sent.filter((b) => b.chat_id === "3").map((b) => b.disable_web_page_preview)).toEqual([true, true]);
      expect(sent.filter((b) => b.chat_id === "5").map((b) => b.disable_web_page_preview)).toEqual([
        undefined,
        undefined,
      ]);
    },
  );

  it("mailto(s):// without ?from= send as user@host (the login itself if an address), as Apprise does", async () => {
    const smtp = env.TEST_SMTP;
    const host = smtp.host.split(":")[0]!;
    const n = await notifyWith([`mailto://ada:smtp-test-password@${smtp.host}/ops@example.com`]);
    const { send_id } = await n.ok("send", "/sends", { title: "no from", body: "derived sender" });
    const sent = await settled(n, send_id);
    expect(sent.summary, JSON.stringify(sent.results)).toEqual({ delivered: 1, failed: 0, pending: 0 });
    const mails = (await (await fetch(smtp.logUrl)).json()) as {
      user: string;
      from: string;
      to: string[];
      data: string;
    }[];
    const mail = mails.find((m) => m.data.includes(`Message-ID: <${send_id}@`))!;
    expect(mail).toMatchObject({ user: "ada", from: `ada@${host}`, to: ["ops@example.com"] });
    expect(mail.data).toContain(`From: ada@${host}\r\n`);
    // mailtos:// (implicit TLS) reads the same way, and a login that is an address is the sender.
    const secure = await notifyWith([
      "mailtos://ada%40example.com:pw@smtp.example.com/ops@example.com",
      "mailtos://bob:pw@smtp.example.com",
    ]);
    expect((await secure.ok("list_channels", "/channels")).channels).toHaveLength(2);
  });
});

/**
 * watches, per docs/kinds.md and issue 16: each of the 13 check types against a real local target (the
 * receiver's scripted answers, its DNS-over-HTTPS and RDAP responders; chain_balance against the
 * local EVM node is in test/direct), the thresholds (N−1 failures send nothing, the Nth one
 * watch.down; recovery one watch.up; flapping nothing extra), repeats, pause, history, and bad
 * input refused uncharged. Checks are driven by the test clock, never waited for.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { watches } from "../../src/kinds/watching/watches";
import { watchRowsRead } from "./rows-read";
import type { EventEnvelope } from "../../src/delivery/events";
import {
  advance,
  advanceTo,
  balanceOf,
  buyCredits,
  call,
  createResource,
  opsOn,
  problemOf,
  received,
  serveContent,
  verifierOf,
} from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const MINUTE = 60_000;

async function watch(check: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const events = unique();
  const { token } = await buyCredits(1);
  const created = await createResource("watches", token, {
    check,
    interval_seconds: 60,
    notify_url: `${receiver}/ok/${events}`,
    ...extra,
  });
  const ops = opsOn(watches, created.id, created.mgmt, token);
  const verifier = verifierOf(created.record);
  return {
    ...created,
    token,
    ops,
    /** The next scheduled check (a minute on the watch's clock). */
    tick: (ms = MINUTE) => advance(created.id, ms),
    status: () => ops.ok("get", ""),
    last: async () => (await ops.ok("get", "")).last_check!,
    /** The events notify_url got, verified, once `count` have arrived. */
    events: async (count: number) =>
      (await received(events, count)).map((r) => verifier.verify(r.body, r.headers) as EventEnvelope),
    /** How many events arrived, after the queue had time to deliver any that were sent. */
    settledCount: async () => {
      await new Promise((r) => setTimeout(r, 1200));
      return ((await (await fetch(`${receiver}/_log/${events}`)).json()) as unknown[]).length;
    },
  };
}

describe("watches: thresholds and events", () => {
  it(
    "N−1 failures send nothing, the Nth sends watch.down once; recover_after successes send watch.up once; " +
      "flapping sends nothing extra",
    async () => {
      const name = unique();
      const url = await serveContent(name, "fine");
      const w = await watch({ type: "http_status", url }, { alert_after: 3, recover_after: 2 });
      expect(w.record.status).toMatchObject({ state: "pending", checks: 0 });
      await w.tick(0); // the first check is made at once
      expect(await w.status()).toMatchObject({ state: "up", checks: 1, consecutive_failures: 0 });

      await serveContent(name, "broken", { status: 503 });
      await w.tick();
      await w.tick();
      expect(await w.status()).toMatchObject({ state: "up", consecutive_failures: 2 });
      expect(await w.settledCount()).toBe(0);
      await w.tick();
      expect(await w.status()).toMatchObject({ state: "down", consecutive_failures: 3, alerts_sent: 1 });
      const [down] = await w.events(1);
      expect(down).toMatchObject({
        type: "watch.down",
        resource_id: w.id,
        data: {
          check_type: "http_status",
          state: "down",
          consecutive_failures: 3,
          repeat: false,
          evidence: { ok: false, status: 503, excerpt: "broken", error: expect.stringContaining("503") },
        },
      });
      expect(down!.data.evidence).toMatchObject({ duration_ms: expect.any(Number) });

      // Flapping while down: a success, then a failure, resets the count; nothing is sent.
      await serveContent(name, "fine");
      await w.tick();
      await serveContent(name, "broken", { status: 503 });
      await w.tick();
      expect(await w.status()).toMatchObject({ state: "down", consecutive_successes: 0 });
      await serveContent(name, "fine");
      await w.tick();
      expect(await w.settledCount()).toBe(1);
      await w.tick();
      expect(await w.status()).toMatchObject({ state: "up", consecutive_successes: 2, down_since: null });
      const all = await w.events(2);
      expect(all[1]).toMatchObject({
        type: "watch.up",
        data: { state: "up", downtime_seconds: expect.any(Number), evidence: { ok: true, status: 200 } },
      });
      await w.tick();
      expect(await w.settledCount()).toBe(2);

      const history = await w.ops.ok("history", "/checks?only=failures&limit=2");
      expect(history.items.map((c) => c.status)).toEqual([503, 503]);
      expect(history.next_cursor).not.toBeNull();
      const older = await w.ops.ok("history", `/checks?only=failures&limit=2&cursor=${history.next_cursor}`);
      expect(older.items.map((c) => c.status)).toEqual([503, 503]);
    },
  );

  it("repeats watch.down every realert_seconds while down, checks on schedule even after a late alarm", async () => {
    const name = unique();
    const url = await serveContent(name, "no", { status: 500 });
    const w = await watch({ type: "http_status", url }, { realert_seconds: 120 });
    await w.tick(0);
    expect((await w.events(1))[0]).toMatchObject({ type: "watch.down", data: { alert_number: 1 } });
    await w.tick();
    expect(await w.settledCount()).toBe(1);
    await w.tick();
    expect((await w.events(2))[1]).toMatchObject({ type: "watch.down", data: { alert_number: 2, repeat: true } });
    const before = await w.status();
    // Ten minutes without the alarm: one check when it runs, then the schedule goes on from the slot after it.
    await advance(w.id, 10 * MINUTE + 5000);
    const after = await w.status();
    expect(after.checks).toBe(before.checks + 1);
    expect(Date.parse(after.next_check_at!) - Date.parse(before.next_check_at!)).toBe(10 * MINUTE);
  });

  it("with realert_seconds equal to the interval, repeats every check, however late the alerting one ran", async () => {
    const name = unique();
    const url = await serveContent(name, "no", { status: 500 });
    const w = await watch({ type: "http_status", url }, { realert_seconds: 60 });
    // The first check runs 5 s after its slot; each next one right on its slot.
    await w.tick(5000);
    for (let n = 2; n <= 4; n++) await advanceTo(w.id, (await w.status()).next_check_at!);
    const events = await w.events(4);
    expect(events.map((e) => [e.type, e.data.alert_number])).toEqual([
      ["watch.down", 1],
      ["watch.down", 2],
      ["watch.down", 3],
      ["watch.down", 4],
    ]);
    expect(await w.status()).toMatchObject({ checks: 4, alerts_sent: 4 });
  });

  it("pauses (no checks, the down episode ended) and resumes with a check at once", async () => {
    const name = unique();
    const url = await serveContent(name, "no", { status: 500 });
    const w = await watch({ type: "http_status", url });
    await w.tick(0);
    expect(await w.status()).toMatchObject({ state: "down" });
    expect(await w.ops.ok("pause", "/pause")).toMatchObject({ state: "paused", next_check_at: null, down_since: null });
    await w.tick(5 * MINUTE);
    expect((await w.status()).checks).toBe(1);
    await serveContent(name, "yes");
    expect(await w.ops.ok("resume", "/resume")).toMatchObject({ state: "pending" });
    await w.tick(0);
    expect(await w.status()).toMatchObject({ state: "up", checks: 2 });
    expect(await w.settledCount()).toBe(1); // no watch.up: the pause ended that episode
  });

  it("checks now on request, charged once, recorded without moving the schedule", async () => {
    const name = unique();
    const url = await serveContent(name, "ok");
    const w = await watch({ type: "http_status", url });
    await w.tick(0);
    const next = (await w.status()).next_check_at;
    const spent = (await balanceOf(w.token)).spent_usd;
    const result = await w.ops.ok("check", "/checks");
    expect(result).toMatchObject({ ok: true, status: 200, scheduled_at: null, excerpt: "ok" });
    expect((await balanceOf(w.token)).spent_usd).toBeCloseTo(spent + 0.001, 6);
    expect((await w.status()).next_check_at).toBe(next);
  });
});

describe("watches: what a check costs", () => {
  it("a scheduled check reads and writes a handful of rows, however long the history (bench/README.md)", async () => {
    const url = await serveContent(unique(), "ok");
    const w = await watch({ type: "http_status", url });
    await w.tick(0);
    const rows = await watchRowsRead(w.id);
    const first = await rows.rows(() => w.tick());
    for (let i = 0; i < 20; i++) await w.tick();
    const later = await rows.rows(() => w.tick());
    expect((await w.status()).checks).toBe(23);
    // The run's own rows and the platform's, every part of the object counted (its clock, the outbox's and the
    // lifecycle's due times, asked each time the alarm is set, one row each): 45 read and 4 written when measured.
    expect(first.written).toBeLessThanOrEqual(4);
    expect(first.read).toBeLessThanOrEqual(50);
    expect(later).toEqual(first);
  });
});

describe("watches: the 13 check types", () => {
  it("keyword: present or absent, case-insensitive by default", async () => {
    const name = unique();
    const url = await serveContent(name, "<p>All Systems Operational</p>", { type: "text/html" });
    const present = await watch({ type: "keyword", url, keyword: "systems operational" });
    expect(await present.ops.ok("check", "/checks")).toMatchObject({ ok: true, value: true });
    const exact = await watch({ type: "keyword", url, keyword: "systems operational", case_sensitive: true });
    expect(await exact.ops.ok("check", "/checks")).toMatchObject({
      ok: false,
      error: expect.stringContaining("absent"),
    });
    const absent = await watch({ type: "keyword", url, keyword: "outage", mode: "absent" });
    expect(await absent.ops.ok("check", "/checks")).toMatchObject({ ok: true });
  });

  it("content_change: a CSS selector's text, noise ignored, sends watch.changed with before and after", async () => {
    const name = unique();
    const page = (price: string, stamp: string) =>
      `<html><body><p class="stamp">${stamp}</p><div id="price">Price: ${price} <small>as of ${stamp}` +
      `</small></div></body></html>`;
    const url = await serveContent(name, page("10 EUR", "09:00"), { type: "text/html" });
    const w = await watch({ type: "content_change", url, selector: "#price", ignore: ["as of \\d\\d:\\d\\d"] });
    await w.tick(0);
    expect(await w.last()).toMatchObject({ ok: true, changed: false, value: "Price: 10 EUR" });
    await serveContent(name, page("10 EUR", "09:01"), { type: "text/html" }); // only noise moved
    await w.tick();
    expect(await w.last()).toMatchObject({ changed: false });
    await serveContent(name, page("12   EUR", "09:02"), { type: "text/html" });
    await w.tick();
    const [changed] = await w.events(1);
    expect(changed).toMatchObject({
      type: "watch.changed",
      data: { before: "Price: 10 EUR", after: "Price: 12 EUR", state: "up" },
    });
    expect(await w.status()).toMatchObject({ changes: 1, state: "up" });
  });

  it("content_change: a text region between two markers", async () => {
    const name = unique();
    const url = await serveContent(name, "header STATUS: green :END footer 1");
    const w = await watch({ type: "content_change", url, region: { start: "STATUS:", end: ":END" } });
    await w.tick(0);
    await serveContent(name, "header STATUS: green :END footer 2");
    await w.tick();
    expect(await w.last()).toMatchObject({ changed: false, value: "green" });
    await serveContent(name, "header STATUS: red :END footer 2");
    await w.tick();
    expect(await w.last()).toMatchObject({ changed: true, value: "red" });
  });

  it("json_value: a JSONata (or JSONPath-like) value compared, and `changed`", async () => {
    const name = unique();
    const url = await serveContent(name, JSON.stringify({ status: { db: "ok", lag: 3 }, tags: ["a", "b"] }), {
      type: "application/json",
    });
    const eq = await watch({ type: "json_value", url, expression: "$.status.db", operator: "==", expected: "ok" });
    expect(await eq.ops.ok("check", "/checks")).toMatchObject({ ok: true, value: "ok" });
    const lt = await watch({ type: "json_value", url, expression: "status.lag", operator: "<", expected: 2 });
    expect(await lt.ops.ok("check", "/checks")).toMatchObject({
      ok: false,
      value: 3,
      error: expect.stringContaining("< 2"),
    });
    const has = await watch({ type: "json_value", url, expression: "tags", operator: "contains", expected: "b" });
    expect(await has.ops.ok("check", "/checks")).toMatchObject({ ok: true });
    const changed = await watch({ type: "json_value", url, expression: "status.lag", operator: "changed" });
    await changed.tick(0);
    await serveContent(name, JSON.stringify({ status: { db: "ok", lag: 9 } }), { type: "application/json" });
    await changed.tick();
    expect((await changed.events(1))[0]).toMatchObject({ type: "watch.changed", data: { before: 3, after: 9 } });
    await serveContent(name, "<html>not json</html>", { type: "text/html" });
    expect(await eq.ops.ok("check", "/checks")).toMatchObject({ ok: false, error: "The answer is not JSON." });
  });

  it("response_time: a slow answer fails, and one past timeout_ms fails as a timeout", async () => {
    const slow = await watch({ type: "response_time", url: `${receiver}/slow/400/${unique()}`, threshold_ms: 150 });
    const result = await slow.ops.ok("check", "/checks");
    expect(result).toMatchObject({ ok: false, error: expect.stringMatching(/took \d+ ms \(threshold 150 ms\)/) });
    expect(result.duration_ms).toBeGreaterThanOrEqual(400);
    const fast = await watch({ type: "response_time", url: `${receiver}/ok/${unique()}`, threshold_ms: 5000 });
    expect(await fast.ops.ok("check", "/checks")).toMatchObject({ ok: true });
    const timeout = await watch(
      { type: "http_status", url: `${receiver}/slow/2500/${unique()}` },
      { timeout_ms: 1000 },
    );
    expect(await timeout.ops.ok("check", "/checks")).toMatchObject({
      ok: false,
      status: null,
      error: expect.stringContaining("within 1 s"),
    });
  });

  it("header: equals, matches, absent, present", async () => {
    const name = unique();
    const url = await serveContent(name, "x", {
      headers: { "strict-transport-security": "max-age=63072000", "x-version": "v2.3.1" },
    });
    const check = async (extra: Record<string, unknown>) =>
      (await watch({ type: "header", url, ...extra })).ops.ok("check", "/checks");
    expect(await check({ name: "X-Version", equals: "v2.3.1" })).toMatchObject({ ok: true, value: "v2.3.1" });
    expect(await check({ name: "x-version", matches: "^v3\\." })).toMatchObject({
      ok: false,
      error: expect.stringContaining("does not match"),
    });
    expect(await check({ name: "strict-transport-security" })).toMatchObject({ ok: true });
    expect(await check({ name: "server-timing", absent: true })).toMatchObject({ ok: true });
    expect(await check({ name: "x-version", absent: true })).toMatchObject({ ok: false });
  });

  it("redirect: the expected final URL, or none at all", async () => {
    const name = unique();
    await serveContent(name, "landed");
    const hop = `${receiver}/redirect/${name}`;
    const final = `${receiver}/content/${name}`;
    expect(
      await (await watch({ type: "redirect", url: hop, final_url: final })).ops.ok("check", "/checks"),
    ).toMatchObject({ ok: true, value: final });
    expect(
      await (await watch({ type: "redirect", url: hop, final_url: null })).ops.ok("check", "/checks"),
    ).toMatchObject({ ok: false, error: `Redirected to ${final}.` });
    expect(
      await (await watch({ type: "redirect", url: final, final_url: null })).ops.ok("check", "/checks"),
    ).toMatchObject({ ok: true });
  });

  it("dns_record: over DoH in JSON and RFC 8484 wire format; sets compared in normal form; changes sent", async () => {
    const zone = unique();
    await serveContent(
      zone,
      JSON.stringify({
        A: ["192.0.2.10", "192.0.2.11"],
        AAAA: ["2001:db8:0:0::1"],
        MX: ["10 mail.example.net"],
        TXT: ["v=spf1 -all"],
        CNAME: ["target.example.net"],
      }),
      { type: "application/json" },
    );
    const resolver_url = `${receiver}/doh/${zone}`;
    for (const format of ["json", "wire"]) {
      const dns = (extra: Record<string, unknown>) =>
        watch({ type: "dns_record", name: "www.example.com", resolver_url, format, ...extra });
      expect(await (await dns({ expected: ["192.0.2.11", "192.0.2.10"] })).ops.ok("check", "/checks")).toMatchObject({
        ok: true,
        status: 0,
        value: ["192.0.2.10", "192.0.2.11"],
      });
      expect(await (await dns({ expected: ["192.0.2.10"] })).ops.ok("check", "/checks")).toMatchObject({ ok: false });
      expect(
        await (await dns({ expected: ["192.0.2.10"], match: "contains" })).ops.ok("check", "/checks"),
      ).toMatchObject({ ok: true });
      expect(
        await (await dns({ record_type: "AAAA", expected: ["2001:DB8::1"] })).ops.ok("check", "/checks"),
      ).toMatchObject({ ok: true, value: ["2001:db8::1"] });
      expect(
        await (await dns({ record_type: "MX", expected: ["10 Mail.Example.net."] })).ops.ok("check", "/checks"),
      ).toMatchObject({ ok: true });
      expect(
        await (await dns({ record_type: "TXT", expected: ["v=spf1 -all"] })).ops.ok("check", "/checks"),
      ).toMatchObject({ ok: true });
      expect(
        await (await dns({ record_type: "CNAME", expected: ["target.example.net"] })).ops.ok("check", "/checks"),
      ).toMatchObject({ ok: true });
      expect(await (await dns({ record_type: "NS" })).ops.ok("check", "/checks")).toMatchObject({
        ok: false,
        error: "No NS record.",
      });
    }
    // A record set too long to keep whole is kept as the start of its JSON, readable in the history.
    await serveContent(
      zone,
      JSON.stringify({ TXT: Array.from({ length: 40 }, (_, i) => `v=long-record-${i}-${"x".repeat(150)}`) }),
      { type: "application/json" },
    );
    const long = await watch({ type: "dns_record", name: "www.example.com", record_type: "TXT", resolver_url });
    expect(await long.ops.ok("check", "/checks")).toMatchObject({
      ok: true,
      value: expect.stringMatching(/^\["v=long-record-0-x+.*…$/),
    });
    expect((await long.ops.ok("history", "/checks")).items[0]).toMatchObject({ value: expect.stringMatching(/…$/) });
    await serveContent(zone, JSON.stringify({ A: ["192.0.2.10", "192.0.2.11"] }), { type: "application/json" });
    const changing = await watch({ type: "dns_record", name: "www.example.com", resolver_url, format: "wire" });
    await changing.tick(0);
    await serveContent(zone, JSON.stringify({ A: ["198.51.100.7"] }), { type: "application/json" });
    await changing.tick();
    expect((await changing.events(1))[0]).toMatchObject({
      type: "watch.changed",
      data: { before: ["192.0.2.10", "192.0.2.11"], after: ["198.51.100.7"] },
    });
    await serveContent(zone, JSON.stringify({ rcode: "NXDOMAIN" }), { type: "application/json" });
    expect(await changing.ops.ok("check", "/checks")).toMatchObject({
      ok: false,
      status: 3,
      error: "The resolver answered NXDOMAIN.",
    });
  });

  it("rss: new items since the last check, in watch.changed; RSS 2.0 and Atom", async () => {
    const name = unique();
    const rss = (items: string[]) =>
      `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>` +
      items
        .map(
          (i) =>
            `<item><title>${i}</title><link>https://example.com/${i}</link><guid>${i}</guid>` +
            `<pubDate>Tue, 24 Nov 2026 10:00:00 GMT</pubDate></item>`,
        )
        .join("") +
      `</channel></rss>`;
    const url = await serveContent(name, rss(["b", "a"]), { type: "application/rss+xml" });
    const w = await watch({ type: "rss", url });
    await w.tick(0);
    expect(await w.last()).toMatchObject({ ok: true, changed: false, value: 2 });
    await serveContent(name, rss(["d", "c", "b", "a"]), { type: "application/rss+xml" });
    await w.tick();
    const [event] = await w.events(1);
    expect(event).toMatchObject({
      type: "watch.changed",
      data: { after: 2, items: [{ id: "d", title: "d", link: "https://example.com/d" }, { id: "c" }] },
    });
    await w.tick();
    expect(await w.last()).toMatchObject({ changed: false });

    const atom = unique();
    const feed = (ids: string[]) =>
      `<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>x</title>` +
      ids
        .map(
          (i) =>
            `<entry><id>urn:${i}</id><title type="text">Entry ${i}</title>` +
            `<link rel="alternate" href="https://example.com/${i}"/><updated>2026-11-24T10:00:00Z</updated></entry>`,
        )
        .join("") +
      `</feed>`;
    const atomUrl = await serveContent(atom, feed(["1"]), { type: "application/atom+xml" });
    const a = await watch({ type: "rss", url: atomUrl });
    await a.tick(0);
    await serveContent(atom, feed(["2", "1"]), { type: "application/atom+xml" });
    await a.tick();
    expect((await a.events(1))[0]).toMatchObject({
      data: { items: [{ id: "urn:2", title: "Entry 2", link: "https://example.com/2" }] },
    });

    const junk = await watch({
      type: "rss",
      url: await serveContent(unique(), "<html><body>no feed</body></html>", { type: "text/html" }),
    });
    expect(await junk.ops.ok("check", "/checks")).toMatchObject({
      ok: false,
      error: "The answer is neither RSS nor Atom.",
    });
  });

  it("heartbeat: pings at the public address keep it up; silence past interval+grace downs it; /fail too", async () => {
    const w = await watch({ type: "heartbeat", grace_seconds: 30 });
    const address = new URL(w.record.urls.public as string).pathname;
    expect(w.record.status).toMatchObject({ state: "pending" });
    const ping = async (suffix = "") =>
      (await call("POST", `${address}${suffix}`, { body: "done", headers: { "content-type": "text/plain" } })).status;
    await w.tick(45_000);
    expect(await ping()).toBe(200);
    await w.tick(15_000); // the first check, an interval after creation
    expect(await w.status()).toMatchObject({ state: "up", checks: 1, last_ping_at: expect.any(String) });
    await w.tick(MINUTE);
    expect(await w.status()).toMatchObject({ state: "up", checks: 2 }); // the ping is 75 s old: within 60 + 30
    await w.tick(MINUTE);
    expect(await w.status()).toMatchObject({ state: "down" });
    expect((await w.events(1))[0]).toMatchObject({
      type: "watch.down",
      data: { evidence: { error: "No ping within the last 90 s." } },
    });
    expect(await ping()).toBe(200);
    await w.tick(MINUTE);
    expect(await w.status()).toMatchObject({ state: "up" });
    expect(await ping("/fail")).toBe(200);
    await w.tick(MINUTE);
    expect(await w.last()).toMatchObject({ ok: false, error: "The last ping reported a failure." });
    // Only a heartbeat has an address.
    const other = await watch({ type: "http_status", url: `${receiver}/ok/${unique()}` });
    expect(other.record.urls.public).toBeNull();
  });

  it("domain_expiry: RDAP's expiration event, down within days_before", async () => {
    const name = unique();
    const rdap = (days: number) =>
      JSON.stringify({
        objectClassName: "domain",
        ldhName: "EXAMPLE.COM",
        events: [
          { eventAction: "registration", eventDate: "1995-08-14T04:00:00Z" },
          { eventAction: "expiration", eventDate: new Date(Date.now() + days * 86_400_000 + 3_600_000).toISOString() },
        ],
      });
    await serveContent(name, rdap(100), { type: "application/rdap+json" });
    const w = await watch({
      type: "domain_expiry",
      domain: "example.com",
      days_before: 30,
      rdap_url: `${receiver}/rdap/${name}`,
    });
    expect(await w.ops.ok("check", "/checks")).toMatchObject({ ok: true, value: { days_left: 100 } });
    await serveContent(name, rdap(10), { type: "application/rdap+json" });
    expect(await w.ops.ok("check", "/checks")).toMatchObject({
      ok: false,
      value: { days_left: 10 },
      error: expect.stringContaining("10 day(s) left"),
    });
    const unknown = await watch({
      type: "domain_expiry",
      domain: "example.org",
      rdap_url: `${receiver}/rdap/${unique()}`,
    });
    expect(await unknown.ops.ok("check", "/checks")).toMatchObject({ ok: false, status: 404 });
    const received = (await (await fetch(`${receiver}/_log/${name}`)).json()) as {
      path: string;
      headers: Record<string, string>;
    }[];
    expect(received[0]).toMatchObject({
      path: `/rdap/${name}/domain/example.com`,
      headers: { "user-agent": `zeitvault-watch/1.0 (${w.id})` },
    });
  });

  it("number_threshold: by regex or JSONata, compared, or changed by more than X%", async () => {
    const name = unique();
    const url = await serveContent(name, "<p>Queue depth: 1,250 jobs</p>", { type: "text/html" });
    const below = await watch({ type: "number_threshold", url, regex: "depth: ([\\d,]+)", operator: "<", value: 1000 });
    expect(await below.ops.ok("check", "/checks")).toMatchObject({
      ok: false,
      value: 1250,
      error: "1250 is not < 1000.",
    });
    const json = await serveContent(unique(), JSON.stringify({ price: "101.5" }), { type: "application/json" });
    expect(
      await (
        await watch({ type: "number_threshold", url: json, expression: "price", operator: ">=", value: 100 })
      ).ops.ok("check", "/checks"),
    ).toMatchObject({ ok: true, value: 101.5 });
    const moving = await watch({
      type: "number_threshold",
      url,
      regex: "depth: ([\\d,]+)",
      operator: "changed_by_percent",
      value: 10,
    });
    await moving.tick(0);
    await serveContent(name, "<p>Queue depth: 1,300 jobs</p>", { type: "text/html" }); // +4%
    await moving.tick();
    expect(await moving.last()).toMatchObject({ ok: true, changed: false });
    await serveContent(name, "<p>Queue depth: 1,400 jobs</p>", { type: "text/html" }); // +12% from the baseline
    await moving.tick();
    expect((await moving.events(1))[0]).toMatchObject({ type: "watch.changed", data: { before: 1250, after: 1400 } });
    await serveContent(name, "<p>Queue depth: n/a</p>", { type: "text/html" });
    expect(await below.ops.ok("check", "/checks")).toMatchObject({
      ok: false,
      error: "The expression matched nothing in the answer.",
    });
  });

  it("sends its own User-Agent, the configured headers and a POST body; over max_bytes fails", async () => {
    const name = unique();
    const w = await watch({
      type: "http_status",
      url: `${receiver}/echo/${name}`,
      method: "POST",
      body: '{"q":1}',
      headers: { "x-probe": "yes" },
    });
    expect(await w.ops.ok("check", "/checks")).toMatchObject({ ok: true });
    const [seen] = await received(name, 1);
    expect(seen).toMatchObject({
      method: "POST",
      body: '{"q":1}',
      headers: { "x-probe": "yes", "user-agent": `zeitvault-watch/1.0 (${w.id})` },
    });
    const named = unique();
    const own = await watch({
      type: "http_status",
      url: `${receiver}/echo/${named}`,
      headers: { "User-Agent": "my-probe/2" },
    });
    await own.ops.ok("check", "/checks");
    expect((await received(named, 1))[0]!.headers["user-agent"]).toBe("my-probe/2"); // replaced, not joined
    const big = await serveContent(unique(), "x".repeat(4096));
    expect(
      await (await watch({ type: "http_status", url: big, max_bytes: 1024 })).ops.ok("check", "/checks"),
    ).toMatchObject({ ok: false, error: expect.stringContaining("larger than 1024 bytes") });
  });
});

describe("watches: bad input is refused, uncharged", () => {
  it("refuses what cannot be checked with 422 naming the field", async () => {
    const { token } = await buyCredits(1);
    const spent = (await balanceOf(token)).spent_usd;
    const url = `${receiver}/ok/x`;
    const cases: [Record<string, unknown>, string][] = [
      [{ check: { type: "http_status", url }, interval_seconds: 59 }, "interval_seconds"],
      [{ check: { type: "http_status", url, extra: 1 } }, "check"],
      [{ check: { type: "teapot", url } }, "check.type"],
      [{ check: { type: "keyword", url } }, "check.keyword"],
      [{ check: { type: "http_status", url: "ftp://example.com/" } }, "check.url"],
      // The egress guard's refusals name the nested field (credentials in a URL are refused everywhere).
      [{ check: { type: "keyword", url: "http://user:pw@example.com/", keyword: "ok" } }, "check.url"],
      [
        { check: { type: "dns_record", name: "example.com", resolver_url: "https://user:pw@dns.example/dns-query" } },
        "check.resolver_url",
      ],
      [
        { check: { type: "domain_expiry", domain: "example.com", rdap_url: "https://user:pw@rdap.example" } },
        "check.rdap_url",
      ],
      [
        {
          check: {
            type: "chain_balance",
            rpc_url: "https://user:pw@rpc.example",
            address: `0x${"a".repeat(40)}`,
            operator: ">",
            threshold: "1",
          },
        },
        "check.rpc_url",
      ],
      [{ check: { type: "http_status", url, headers: { "x-a": "b\r\nc" } } }, "check.headers.x-a"],
      [{ check: { type: "json_value", url, expression: "$.a", operator: "==" } }, "check.expected"],
      [{ check: { type: "json_value", url, expression: "$.a[", operator: "changed" } }, "check.expression"],
      [{ check: { type: "number_threshold", url, regex: "(a+)+", operator: ">", value: 1 } }, "check.regex"],
      [{ check: { type: "number_threshold", url, operator: ">", value: 1 } }, "check.regex"],
      [{ check: { type: "content_change", url, selector: "p[[" } }, "check.selector"],
      [{ check: { type: "header", url, name: "x", equals: "a", absent: true } }, "check.absent"],
      [{ check: { type: "response_time", url, threshold_ms: 20_000 }, timeout_ms: 5000 }, "check.threshold_ms"],
      [{ check: { type: "dns_record", name: "bad name!" } }, "check.name"],
      [
        { check: { type: "chain_balance", rpc_url: url, address: "0x12", operator: ">", threshold: "1" } },
        "check.address",
      ],
      [
        {
          check: {
            type: "chain_balance",
            rpc_url: url,
            address: `0x${"a".repeat(40)}`,
            operator: ">",
            threshold: "-1",
          },
        },
        "check.threshold",
      ],
      [{ check: { type: "http_status", url }, escalation: "zvm_notarealtoken" }, "escalation"],
      [{ check: { type: "http_status", url }, alert_notify: "zvm_notarealtoken" }, "alert_notify"],
    ];
    for (const [body, field] of cases) {
      const problem = await problemOf(
        await call("POST", "/v1/watches", { body, headers: { authorization: `Bearer ${token}` } }),
        422,
      );
      expect(JSON.stringify(problem.errors ?? problem.detail), JSON.stringify(body)).toContain(field);
    }
    expect((await balanceOf(token)).spent_usd).toBe(spent);
  });

  it("a hostile feed's entities do not expand", async () => {
    // lol1 is ten &lol; and each next one ten of the one before.
    const entities = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ""};`.repeat(10)}">`);
    const bomb =
      `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">` +
      entities.join("") +
      `]><rss version="2.0"><channel><item><title>&lol9;</title></item></channel></rss>`;
    const w = await watch({ type: "rss", url: await serveContent(unique(), bomb, { type: "application/rss+xml" }) });
    const result = await w.ops.ok("check", "/checks");
    // Refused or read with the entities left unexpanded: either way nothing grew.
    expect(JSON.stringify(result).length).toBeLessThan(4000);
  });
});

/**
 * What the pages meant for people say, read as HTML through the public addresses: times in words
 * (UTC, "27 Nov 2026, 15:22 UTC") with the instant in `<time datetime>` for the script that shows
 * it in the reader's zone (that script at work: test/node/pages.test.ts), never raw RFC 3339 text;
 * and no internal label (the owner link's `owner-link`, an incident's `ack page` or `api`, a
 * resource id) where a person reads. Approval, bin view and escalation ack pages.
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { bins } from "../../src/kinds/address/bins";
import { escalations } from "../../src/kinds/watching/escalations";
import { advance, buyCredits, createResource, json, opsOn, publicUrl, received, serveContent } from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const MINUTE = 60_000;
const HTML = { accept: "text/html" };

/** The text a person reads (tags and attributes dropped). */
const readable = (html: string) =>
  html.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, "").replace(/<[^>]+>/g, " ");

/** Every `<time>` on the page: its instant and its words. */
const times = (html: string) =>
  [...html.matchAll(/<time datetime="([^"]+)"[^>]*>([^<]*)<\/time>/g)].map((m) => ({ datetime: m[1]!, text: m[2]! }));

function expectForPeople(html: string): void {
  const text = readable(html);
  expect(text, "no RFC 3339 time in the text").not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
  expect(text, "no internal label").not.toMatch(/owner-link|ack page|\br_[0-9A-Za-z]{8,}/);
  expect(html).toMatch(/<script nonce="[^"]+">document\.querySelectorAll\("time\[data-local\]"\)/);
  for (const t of times(html)) {
    expect(t.text).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}(:\d{2})? UTC$/);
    expect(new Date(t.datetime).toISOString()).toBe(t.datetime);
  }
}

describe("pages for people", () => {
  it("an approval's page: the owner's link asks, is decided in words; times in words with their instant", async () => {
    const { token } = await buyCredits(1);
    const created = await createResource("approvals", token, { title: "Ship it?", timeout_seconds: 3600 });
    const url = publicUrl(created.record);
    const ask = await (await SELF.fetch(url, { headers: HTML })).text();
    expectForPeople(ask);
    expect(readable(ask)).toContain("Anyone with this link can decide; decide by");
    const [deadline] = times(ask);
    expect(Math.abs(Date.parse(deadline!.datetime) - (Date.now() + 3600_000))).toBeLessThan(MINUTE);

    const decided = await (
      await SELF.fetch(url, {
        method: "POST",
        body: "option=approve",
        headers: { ...HTML, "content-type": "application/x-www-form-urlencoded" },
      })
    ).text();
    expectForPeople(decided);
    expect(readable(decided)).toMatch(/Decided: Approve, through the request's own link/);
    expect(times(decided)).toHaveLength(1);
  });

  it("a bin's view page: each capture's arrival in words, to the second, with its instant", async () => {
    const { token } = await buyCredits(1);
    const created = await createResource("bins", token, {});
    expect((await SELF.fetch(`${publicUrl(created.record)}/hook`, { method: "POST", body: "x" })).status).toBe(200);
    const info = await opsOn(bins, created.id, created.mgmt, token).ok("info", "");
    const view = await (await SELF.fetch(info.view_url, { headers: HTML })).text();
    expectForPeople(view);
    const [arrival] = times(view);
    expect(arrival!.text).toMatch(/:\d{2}:\d{2} UTC$/);
    expect(Math.abs(Date.parse(arrival!.datetime) - Date.now())).toBeLessThan(MINUTE);
  });

  it("an escalation's ack page: a watch's incident named in words; resolving on recovery said in words", async () => {
    const { token } = await buyCredits(2);
    const to = unique();
    const policy = await createResource("escalations", token, {
      steps: [{ delay_seconds: 0, targets: [{ url: `${receiver}/ok/${to}` }] }],
    });
    const page = unique();
    const target = await serveContent(page, "broken", { status: 500 });
    const watch = await createResource("watches", token, {
      check: { type: "http_status", url: target },
      interval_seconds: 60,
      escalation: policy.mgmt,
    });
    await advance(watch.id, 0);
    const [step] = await received(to, 1);
    const { ack_url, incident_id } = JSON.parse(step!.body).data as { ack_url: string; incident_id: string };
    const open = await (await SELF.fetch(ack_url, { headers: HTML })).text();
    expectForPeople(open);
    expect(readable(open)).toContain(`HTTP status watch of ${target} is down`);

    await serveContent(page, "fine");
    await advance(watch.id, MINUTE);
    const ops = opsOn(escalations, policy.id, policy.mgmt, token);
    for (let i = 0; i < 50 && (await ops.ok("get_incident", `/incidents/${incident_id}`)).state !== "resolved"; i++)
      await new Promise((r) => setTimeout(r, 100));
    const resolved = await (await SELF.fetch(ack_url, { headers: HTML })).text();
    expectForPeople(resolved);
    expect(readable(resolved)).toMatch(/Resolved\s+automatically, as what raised it recovered at/);
    expect(times(resolved)).toHaveLength(2);

    // Acknowledged on the page without a name: said as such, not as the label the API records.
    const other = await ops.ok("trigger", "/incidents", { title: "Disk full" });
    const acked = await (
      await SELF.fetch(other.ack_url, {
        method: "POST",
        body: "by=",
        headers: { ...HTML, "content-type": "application/x-www-form-urlencoded" },
      })
    ).text();
    expectForPeople(acked);
    expect(readable(acked)).toMatch(/Acknowledged\s+on this page at/);
    expect(
      (await json(await SELF.fetch(other.ack_url, { headers: { accept: "application/json" } }))).acknowledged_by,
    ).toBe("ack page");
  });
});

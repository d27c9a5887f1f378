/**
 * inboxes, per docs/kinds.md and issue 13: any method at the address or below it, bodies up to 10 MiB
 * kept byte-exact in arrival order; pull with a cursor and long-poll, ack; signatures checked as
 * Stripe, GitHub, Slack, Standard Webhooks and Shopify sign them (with the providers' own
 * libraries where they publish one).
 */
import { SELF, env, runInDurableObject } from "cloudflare:test";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { inboxes } from "../../src/kinds/address/inboxes";
import { MAX_ITEM_BYTES, MAX_ITEMS } from "../../src/kinds/address/inboxes/schema";
import { sha256Hex, toBase64, toHex } from "../../src/bytes";
import type { allItems } from "../../src/kinds/address/captures/pull";
import {
  ORIGIN,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  opsOn,
  problemOf,
  publicUrl,
  r2Keys,
  storageDump,
  stubOf,
  type ResourceExport,
} from "../harness";

/** What an inbox's export holds (besides its info): every item, acked ones too. */
type InboxExport = ResourceExport<{ items: ReturnType<typeof allItems> }>;

async function inbox(body: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("inboxes", token, body);
  const url = publicUrl(created.record);
  const post = (path: string, init: RequestInit = {}) => SELF.fetch(`${url}${path}`, { method: "POST", ...init });
  return { ...created, token, url, post, ...opsOn(inboxes, created.id, created.mgmt, token) };
}

const download = async (url: string | null) => {
  expect(url, "a body link").toMatch(/^https:/);
  const res = await call("GET", url!.slice(ORIGIN.length));
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
};

async function hmac(key: string, message: string): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(key),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(message)));
}

describe("inboxes", () => {
  it("keeps every method, the path below, query, headers, client address, exact bytes, in arrival order", async () => {
    const box = await inbox();
    const binary = new Uint8Array(300).map((_, i) => (i * 7) & 0xff);
    const answers = [
      await box.post("", {
        body: JSON.stringify({ event: "created" }),
        headers: { "content-type": "application/json", "x-github-event": "push" },
      }),
      await SELF.fetch(`${box.url}/hooks/a%20b/?x=1&x=2&empty=`, {
        method: "PUT",
        body: binary,
        headers: {
          "content-type": "application/octet-stream",
          "cf-connecting-ip": "198.51.100.4",
          connection: "keep-alive",
        },
      }),
      await SELF.fetch(`${box.url}/gone`, { method: "DELETE" }),
      await SELF.fetch(`${box.url}?challenge=abc`, { method: "GET" }),
    ];
    const seqs = [];
    for (const res of answers) {
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body).toMatchObject({ received: true, verified: null });
      seqs.push(body.seq);
    }
    expect(seqs).toEqual([1, 2, 3, 4]);

    const page = await box.ok("pull", "/items");
    expect(page.items.map((i) => [i.seq, i.method, i.path])).toEqual([
      [1, "POST", ""],
      [2, "PUT", "/hooks/a%20b/"],
      [3, "DELETE", "/gone"],
      [4, "GET", ""],
    ]);
    const [first, second, third, fourth] = page.items;
    expect(first).toMatchObject({
      body_text: '{"event":"created"}',
      body_base64: null,
      body_url: null,
      content_type: "application/json",
      verified: null,
      acked_at: null,
    });
    expect(first!.headers["x-github-event"]).toBe("push");
    expect(second).toMatchObject({
      query: [
        ["x", "1"],
        ["x", "2"],
        ["empty", ""],
      ],
      client_ip: "198.51.100.4",
      size: 300,
      sha256: sha256Hex(binary),
      body_text: null,
      body_base64: toBase64(binary),
    });
    expect(second!.headers.connection).toBeUndefined();
    expect(third).toMatchObject({ size: 0, body_text: "", sha256: sha256Hex(new Uint8Array(0)) });
    expect(fourth!.query).toEqual([["challenge", "abc"]]);
    expect(page.next_cursor).toBe("4");

    // The cursor goes on from where the last pull ended; acked items leave the pull.
    expect((await box.ok("pull", "/items?cursor=3")).items.map((i) => i.seq)).toEqual([4]);
    expect(await box.ok("ack", "/items/ack", { seqs: [1, 2, 2] })).toEqual({ acked: 2, pending: 2 });
    expect((await box.ok("pull", "/items")).items.map((i) => i.seq)).toEqual([3, 4]);
    expect(await box.ok("ack", "/items/ack", { through: 4 })).toEqual({ acked: 2, pending: 0 });
    const empty = await box.ok("pull", "/items?cursor=4");
    expect(empty).toEqual({ items: [], next_cursor: "4" });
    expect(await box.ok("info", "")).toMatchObject({ pending: 0, acked: 4, last_seq: 4, verify: null });

    // The export keeps acked items until the inbox ends.
    const exported = await json<InboxExport>(
      await call("GET", `/v1/resources/${box.id}/export`, { headers: managed(box.mgmt) }),
    );
    expect(
      exported.data.items.map((i: { seq: number; acked_at: string | null }) => [i.seq, i.acked_at !== null]),
    ).toEqual([
      [1, true],
      [2, true],
      [3, true],
      [4, true],
    ]);
    expect(exported.data.items[1]!.body_base64).toBe(toBase64(binary));
  });

  it("a 10 MiB binary body comes back byte-exact from pull and export; 10 MiB + 1 is 413, stores nothing", async () => {
    const box = await inbox();
    const big = new Uint8Array(MAX_ITEM_BYTES).map((_, i) => (i * 131 + (i >> 11)) & 0xff);
    const res = await box.post("/upload", { body: big, headers: { "content-type": "application/octet-stream" } });
    expect(res.status).toBe(200);
    const [item] = (await box.ok("pull", "/items")).items;
    expect(item).toMatchObject({ size: MAX_ITEM_BYTES, sha256: sha256Hex(big), body_text: null, body_base64: null });
    expect(sha256Hex(await download(item!.body_url))).toBe(sha256Hex(big));
    const exported = await json<InboxExport>(
      await call("GET", `/v1/resources/${box.id}/export`, { headers: managed(box.mgmt) }),
    );
    expect(sha256Hex(await download(exported.data.items[0]!.body_url))).toBe(sha256Hex(big));

    const keys = await r2Keys(box.id);
    const over = await box.post("/upload", { body: new Uint8Array(MAX_ITEM_BYTES + 1) });
    expect(over.status).toBe(413);
    expect(await r2Keys(box.id)).toEqual(keys);
    expect(await box.ok("info", "")).toMatchObject({ pending: 1, last_seq: 1 });
    // Cancel leaves nothing in R2.
    expect((await call("DELETE", `/v1/resources/${box.id}`, { headers: managed(box.mgmt) })).status).toBe(200);
    expect(await r2Keys(box.id)).toEqual([]);
  });

  it("a long-poll pull wakes when a request arrives", async () => {
    const box = await inbox();
    const started = Date.now();
    const waiting = box.ok("pull", "/items?wait_seconds=20");
    await new Promise((r) => setTimeout(r, 300));
    expect((await box.post("", { body: "ping" })).status).toBe(200);
    const page = await waiting;
    expect(page.items.map((i) => i.body_text)).toEqual(["ping"]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("1,000 requests posted in parallel are all kept, each exactly once, in a consistent order", async () => {
    const box = await inbox();
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, n) =>
        box.post("", { body: JSON.stringify({ n }) }).then((r) => json<{ seq: number }>(r)),
      ),
    );
    expect(new Set(answers.map((a) => a.seq)).size).toBe(1000);
    const seen: { seq: number; n: number; at: number }[] = [];
    let cursor: string | null = null;
    for (;;) {
      const page: {
        items: { seq: number; body_text: string | null; received_at: string }[];
        next_cursor: string | null;
      } = await box.ok("pull", `/items?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
      if (page.items.length === 0) break;
      for (const i of page.items)
        seen.push({ seq: i.seq, n: JSON.parse(i.body_text!).n, at: Date.parse(i.received_at) });
      cursor = page.next_cursor;
    }
    expect(seen.map((s) => s.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(new Set(seen.map((s) => s.n)).size).toBe(1000);
    // Each request's answer names the seq it was stored under.
    for (const a of answers) expect(seen[a.seq - 1]).toBeDefined();
  });

  it("is full at its limit: 507, nothing stored", async () => {
    const box = await inbox();
    // Kept as a rewrite of the counter: 10,000 real captures through the public address would take minutes here.
    await runInDurableObject(
      stubOf(box.id),
      (_o, state) => void state.storage.sql.exec("UPDATE capture_stats SET items = ?", MAX_ITEMS),
    );
    const res = await box.post("", { body: "one too many" });
    const problem = await problemOf(res, 507);
    expect(problem.code).toBe("storage_full");
    expect((await box.ok("pull", "/items")).items).toEqual([]);
  });
});

describe("inbox signatures", () => {
  const payload = JSON.stringify({ id: "evt_1", type: "payment_intent.succeeded", amount: 4200 });
  const tampered = payload.replace("4200", "4201");

  async function checks(
    provider: string,
    secret: string,
    headersFor: (body: string) => Promise<Record<string, string>>,
  ) {
    const box = await inbox({ verify: { provider, secret } });
    expect(JSON.stringify(box.record)).not.toContain(secret);
    expect(box.record.config).toEqual({ verify: { provider, reject_unverified: false } });
    const good = await headersFor(payload);
    expect((await json(await box.post("", { body: payload, headers: good }))).verified).toBe(true);
    expect((await json(await box.post("", { body: tampered, headers: good }))).verified).toBe(false);
    expect((await json(await box.post("", { body: payload }))).verified).toBe(false);
    const items = (await box.ok("pull", "/items")).items;
    expect(items.map((i) => i.verified)).toEqual([true, false, false]);
    expect(items[1]!.verification_error).toContain("does not match");
    expect(items[2]!.verification_error).toContain("missing");
    return box;
  }

  it("Stripe, signed by the stripe library", async () => {
    const secret = "whsec_test_secret_for_the_inbox";
    await checks("stripe", secret, async (body) => ({
      "stripe-signature": await Stripe.webhooks.generateTestHeaderStringAsync({
        payload: body,
        secret,
        cryptoProvider: Stripe.createSubtleCryptoProvider(),
      }),
    }));
  });

  it("GitHub, signed by @octokit/webhooks-methods", async () => {
    const secret = "It's a Secret to Everybody";
    await checks("github", secret, async (body) => ({ "x-hub-signature-256": await githubSign(secret, body) }));
  });

  it("Standard Webhooks, signed by the standardwebhooks library", async () => {
    const secret = `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(24)))}`;
    await checks("standard-webhooks", secret, async (body) => {
      const id = `msg_${crypto.randomUUID()}`;
      const at = new Date();
      return {
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(secret).sign(id, at, body),
      };
    });
  });

  it("Slack, signed as its documentation says, and refused when the timestamp is stale", async () => {
    const secret = "8f742231b10e8888abcd99yyyzzz85a5";
    const slack = async (body: string, ts = Math.floor(Date.now() / 1000)) => ({
      "x-slack-request-timestamp": String(ts),
      "x-slack-signature": `v0=${toHex(await hmac(secret, `v0:${ts}:${body}`))}`,
    });
    const box = await checks("slack", secret, (body) => slack(body));
    const stale = await json(
      await box.post("", { body: payload, headers: await slack(payload, Math.floor(Date.now() / 1000) - 600) }),
    );
    expect(stale.verified).toBe(false);
    expect((await box.ok("pull", "/items?cursor=3")).items[0]!.verification_error).toContain("300 s");
  });

  it("Shopify, signed as its documentation says", async () => {
    const secret = "shpss_0123456789abcdef";
    await checks("shopify", secret, async (body) => ({ "x-shopify-hmac-sha256": toBase64(await hmac(secret, body)) }));
  });

  it("Twitch EventSub and Zoom, signed as their documentation says", async () => {
    const twitch = "twitch-subscription-secret";
    await checks("twitch", twitch, async (body) => {
      const id = crypto.randomUUID();
      const at = new Date().toISOString();
      return {
        "twitch-eventsub-message-id": id,
        "twitch-eventsub-message-timestamp": at,
        "twitch-eventsub-message-signature": `sha256=${toHex(await hmac(twitch, id + at + body))}`,
      };
    });
    const zoom = "zoom-secret-token";
    await checks("zoom", zoom, async (body) => {
      const ts = String(Math.floor(Date.now() / 1000));
      return { "x-zm-request-timestamp": ts, "x-zm-signature": `v0=${toHex(await hmac(zoom, `v0:${ts}:${body}`))}` };
    });
  });

  it("checks a large body from R2, and refuses unverified requests when asked: 401, nothing stored", async () => {
    const secret = "large-body-secret";
    const box = await inbox({ verify: { provider: "github", secret, reject_unverified: true } });
    const big = "x".repeat(1024 * 1024);
    const good = await box.post("/big", {
      body: big,
      headers: { "x-hub-signature-256": await githubSign(secret, big) },
    });
    expect(good.status).toBe(200);
    const keys = await r2Keys(box.id);
    const bad = await box.post("/big", {
      body: `${big}!`,
      headers: { "x-hub-signature-256": await githubSign(secret, big) },
    });
    expect((await problemOf(bad, 401)).detail).toContain("github signature does not verify");
    expect(await r2Keys(box.id)).toEqual(keys);
    const items = (await box.ok("pull", "/items")).items;
    expect(items.map((i) => [i.verified, i.size])).toEqual([[true, big.length]]);
  });

  it("keeps the secret sealed: nowhere in storage, the record or the export", async () => {
    const secret = `canary-${crypto.randomUUID()}`;
    const box = await inbox({ verify: { provider: "shopify", secret } });
    const dump = await storageDump(box.id);
    expect(dump).toContain("inbox");
    expect(dump).not.toContain(secret);
    const d1 = JSON.stringify(
      (await env.DB.prepare("SELECT * FROM resources WHERE id = ?").bind(box.id).all()).results,
    );
    expect(d1).not.toContain(secret);
    const exported = await call("GET", `/v1/resources/${box.id}/export`, { headers: managed(box.mgmt) });
    expect(await exported.text()).not.toContain(secret);
  });
});

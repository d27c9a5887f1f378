/**
 * handshakes, per docs/kinds.md and issue 13: each provider's challenge answered as its documentation
 * says it must be, checked here by computing the expected answer from the provider's published
 * algorithm (WebCrypto HMACs, not the service's code); wrong tokens and signatures refused with
 * 403; everything else buffered like an inbox, Slack/Twitch/Zoom signatures marking it verified.
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { handshakes } from "../../src/kinds/address/handshakes";
import { toBase64, toHex } from "../../src/bytes";
import {
  buyCredits,
  call,
  createResource,
  json,
  managed,
  opsOn,
  problemOf,
  publicUrl,
  storageDump,
  type ResourceExport,
} from "../harness";

const SECRETS = {
  slack_signing_secret: "8f742231b10e8888abcd99yyyzzz85a5",
  meta_verify_token: "meatyhamhock",
  twitter_consumer_secret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
  zoom_secret_token: "zoom-secret-token-1234",
  twitch_secret: "twitch-subscription-secret",
};

async function responder(body: Record<string, unknown> = SECRETS) {
  const { token } = await buyCredits(1);
  const created = await createResource("handshakes", token, body);
  return { ...created, token, url: publicUrl(created.record), ...opsOn(handshakes, created.id, created.mgmt, token) };
}

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

/**
 * Twitch's headers for `body`: sha256= hex HMAC over message id, timestamp and body (dev.twitch.tv, "Verifying the
 * event message").
 */
async function twitchHeaders(body: string, type: string, secret = SECRETS.twitch_secret, at = new Date()) {
  const id = crypto.randomUUID();
  const timestamp = at.toISOString();
  return {
    "content-type": "application/json",
    "twitch-eventsub-message-id": id,
    "twitch-eventsub-message-timestamp": timestamp,
    "twitch-eventsub-message-type": type,
    "twitch-eventsub-message-signature": `sha256=${toHex(await hmac(secret, id + timestamp + body))}`,
  };
}

async function slackHeaders(body: string, ts = Math.floor(Date.now() / 1000)) {
  return {
    "content-type": "application/json",
    "x-slack-request-timestamp": String(ts),
    "x-slack-signature": `v0=${toHex(await hmac(SECRETS.slack_signing_secret, `v0:${ts}:${body}`))}`,
  };
}

describe("handshakes", () => {
  it("answers every protocol as its provider checks it", async () => {
    const r = await responder();
    expect(r.record.config).toEqual({ secrets: Object.keys(SECRETS) });
    for (const secret of Object.values(SECRETS)) expect(JSON.stringify(r.record)).not.toContain(secret);

    // Slack url_verification: the challenge back (signed request).
    const slackBody = JSON.stringify({
      token: "Jhj5dZrVaK7ZwHHjRyZWjbDl",
      challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
      type: "url_verification",
    });
    const slack = await SELF.fetch(r.url, { method: "POST", body: slackBody, headers: await slackHeaders(slackBody) });
    expect(slack.status).toBe(200);
    expect(await json(slack)).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });

    // Meta: hub.challenge back as the body when hub.verify_token matches.
    const meta = await SELF.fetch(`${r.url}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock`);
    expect(meta.status).toBe(200);
    expect(await meta.text()).toBe("1158201444");

    // Microsoft Graph: the decoded validationToken, as text/plain, 200.
    const token = "Validation: Testing client application reachability for subscription Request-Id: 25b2b8d2-1f2c-4a3e";
    const graph = await SELF.fetch(`${r.url}/notify?validationToken=${encodeURIComponent(token)}`, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
    expect(graph.status).toBe(200);
    expect(graph.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await graph.text()).toBe(token);

    // X CRC: response_token = sha256= base64 HMAC-SHA256(consumer secret, crc_token).
    const crc = "9b4507b3-9040-4669-9ec1-0ed2b2f1ab12";
    const x = await SELF.fetch(`${r.url}?crc_token=${crc}&nonce=abc`);
    expect(await json(x)).toEqual({
      response_token: `sha256=${toBase64(await hmac(SECRETS.twitter_consumer_secret, crc))}`,
    });

    // Zoom: encryptedToken = hex HMAC-SHA256(secret token, plainToken).
    const zoomBody = JSON.stringify({
      payload: { plainToken: "qgg8vlvZRS6UYooatFL8Aw" },
      event_ts: 1654503849680,
      event: "endpoint.url_validation",
    });
    const zoom = await SELF.fetch(r.url, {
      method: "POST",
      body: zoomBody,
      headers: { "content-type": "application/json" },
    });
    expect(await json(zoom)).toEqual({
      plainToken: "qgg8vlvZRS6UYooatFL8Aw",
      encryptedToken: toHex(await hmac(SECRETS.zoom_secret_token, "qgg8vlvZRS6UYooatFL8Aw")),
    });

    // Twitch: the raw challenge, text/plain, once the signature checks.
    const twitchBody = JSON.stringify({
      challenge: "pogchamp-kappa-360noscope-vohiyo",
      subscription: { id: "f1c2a387-161a-49f9-a165-0f21d7a4e1c4", type: "channel.follow" },
    });
    const twitch = await SELF.fetch(r.url, {
      method: "POST",
      body: twitchBody,
      headers: await twitchHeaders(twitchBody, "webhook_callback_verification"),
    });
    expect(twitch.status).toBe(200);
    expect(twitch.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await twitch.text()).toBe("pogchamp-kappa-360noscope-vohiyo");

    // Dropbox: the challenge echoed, with nosniff.
    const dropbox = await SELF.fetch(`${r.url}/dropbox?challenge=ZTMqy5K8bXX3c1xdbK8Y`);
    expect(await dropbox.text()).toBe("ZTMqy5K8bXX3c1xdbK8Y");
    expect(dropbox.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(dropbox.headers.get("x-content-type-options")).toBe("nosniff");

    // None of them is buffered; the info shows each answered.
    const info = await r.ok("info", "");
    expect(info.pending).toBe(0);
    expect(info.handshakes.map((h) => h.protocol)).toEqual([
      "dropbox",
      "twitch",
      "zoom",
      "twitter",
      "graph",
      "meta",
      "slack",
    ]);
  });

  it("refuses a wrong token or signature, or a challenge it has no secret for, with 403; none buffered", async () => {
    const r = await responder();
    await problemOf(await SELF.fetch(`${r.url}?hub.mode=subscribe&hub.challenge=1&hub.verify_token=wrong`), 403);
    const twitchBody = JSON.stringify({ challenge: "c" });
    const forged = await twitchHeaders(twitchBody, "webhook_callback_verification", "not-the-secret");
    await problemOf(await SELF.fetch(r.url, { method: "POST", body: twitchBody, headers: forged }), 403);
    const stale = await twitchHeaders(
      twitchBody,
      "webhook_callback_verification",
      SECRETS.twitch_secret,
      new Date(Date.now() - 11 * 60_000),
    );
    expect(
      (await problemOf(await SELF.fetch(r.url, { method: "POST", body: twitchBody, headers: stale }), 403)).detail,
    ).toContain("600 s");
    const slackBody = JSON.stringify({ type: "url_verification", challenge: "c" });
    await problemOf(
      await SELF.fetch(r.url, {
        method: "POST",
        body: slackBody,
        headers: await slackHeaders(slackBody.replace("c", "d")),
      }),
      403,
    );

    const bare = await responder({});
    expect(bare.record.config).toEqual({ secrets: [] });
    expect((await problemOf(await SELF.fetch(`${bare.url}?crc_token=x`), 403)).detail).toContain(
      "twitter_consumer_secret",
    );
    await problemOf(await SELF.fetch(`${bare.url}?hub.mode=subscribe&hub.challenge=1&hub.verify_token=x`), 403);
    // Slack without its secret: answered, unchecked; Graph and Dropbox need none.
    expect(await json(await SELF.fetch(bare.url, { method: "POST", body: slackBody }))).toEqual({ challenge: "c" });
    expect(await (await SELF.fetch(`${bare.url}?validationToken=t`, { method: "POST" })).text()).toBe("t");
    for (const x of [r, bare]) expect((await x.ok("pull", "/items")).items).toEqual([]);
  });

  it("buffers everything else like an inbox, marking Slack, Twitch and Zoom signatures verified or not", async () => {
    const r = await responder();
    const event = JSON.stringify({ subscription: { type: "channel.follow" }, event: { user_name: "someone" } });
    const notification = await SELF.fetch(r.url, {
      method: "POST",
      body: event,
      headers: await twitchHeaders(event, "notification"),
    });
    expect(await json(notification)).toEqual({ received: true, seq: 1, verified: true });
    const slackEvent = JSON.stringify({ type: "event_callback", event: { type: "app_mention" } });
    expect(
      await json(
        await SELF.fetch(`${r.url}/slack`, {
          method: "POST",
          body: slackEvent,
          headers: await slackHeaders(slackEvent),
        }),
      ),
    ).toMatchObject({ seq: 2, verified: true });
    const ts = String(Math.floor(Date.now() / 1000));
    const zoomEvent = JSON.stringify({ event: "meeting.started" });
    const zoomSig = `v0=${toHex(await hmac(SECRETS.zoom_secret_token, `v0:${ts}:${zoomEvent}`))}`;
    expect(
      await json(
        await SELF.fetch(r.url, {
          method: "POST",
          body: zoomEvent.replace("started", "ended"),
          headers: { "x-zm-request-timestamp": ts, "x-zm-signature": zoomSig },
        }),
      ),
    ).toMatchObject({ seq: 3, verified: false });
    expect(await json(await SELF.fetch(`${r.url}/other?a=1`, { method: "PUT", body: "plain" }))).toEqual({
      received: true,
      seq: 4,
      verified: null,
    });

    const page = await r.ok("pull", "/items");
    expect(page.items.map((i) => [i.seq, i.path, i.verified])).toEqual([
      [1, "", true],
      [2, "/slack", true],
      [3, "", false],
      [4, "/other", null],
    ]);
    expect(page.items[0]!.body_text).toBe(event);
    expect(await r.ok("ack", "/items/ack", { through: 4 })).toEqual({ acked: 4, pending: 0 });
    const exported = await json<ResourceExport<{ items: unknown[]; secrets: string[] }>>(
      await call("GET", `/v1/resources/${r.id}/export`, { headers: managed(r.mgmt) }),
    );
    expect(exported.data.items).toHaveLength(4);
    expect(exported.data.secrets).toEqual(Object.keys(SECRETS));
  });

  it("keeps its secrets sealed: never in the record, export, D1 or the object's storage", async () => {
    const r = await responder();
    const exported = await call("GET", `/v1/resources/${r.id}/export`, { headers: managed(r.mgmt) });
    const dump = await storageDump(r.id);
    expect(dump).toContain("handshake_secrets");
    const seen = [JSON.stringify(r.record), await exported.text(), dump];
    seen.push(JSON.stringify((await env.DB.prepare("SELECT * FROM resources WHERE id = ?").bind(r.id).all()).results));
    for (const secret of Object.values(SECRETS)) for (const text of seen) expect(text).not.toContain(secret);
  });
});

/**
 * egress-connectors, per issue 15 and docs/kinds.md: requests sent through a real forward proxy (Debian's
 * tinyproxy, test/peers/egress-proxy-setup.ts, sending from 127.0.0.2) to a local upstream (the
 * receiver), which sees them arrive from the proxy's address; the allowlist (exact, wildcard, port),
 * sealed headers, the answer whole (text, bytes, chunked), the log; refusals (403 off the list, 413
 * past the cap, 502 for a target that fails or is too slow, 422 for bad input), none charged.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { egressConnectors } from "../../src/kinds/utilities/egress-connectors";
import { allowed } from "../../src/kinds/utilities/egress-connectors/store";
import { balanceOf, buyCredits, call, createResource, json, opsOn, serveContent, storageDump, usd } from "../harness";

const RECEIVER = new URL(env.TEST_RECEIVER_URL);
const FETCH_PRICE = 0.001;

async function connector(body: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("egress-connectors", token, { allowed_hosts: [RECEIVER.host], ...body });
  return { ...created, token, ...opsOn(egressConnectors, created.id, created.mgmt, token) };
}

const spent = async (token: string) => usd((await balanceOf(token)).spent_usd);

describe("egress-connectors", () => {
  it("sends via the forward proxy: upstream sees its address, sealed headers, body; answer, log, charge", async () => {
    const c = await connector({
      allowed_hosts: ["Example.COM.", "*.Example.com", RECEIVER.host],
      headers: { authorization: "Bearer sealed-key-4711", "x-team": "ops" },
    });
    expect(c.record.config).toMatchObject({
      allowed_hosts: ["example.com", "*.example.com", RECEIVER.host],
      header_names: ["authorization", "x-team"],
      egress_ips: ["127.0.0.2"],
    });
    expect(JSON.stringify(c.record)).not.toContain("sealed-key-4711");
    expect(await storageDump(c.id)).not.toContain("sealed-key-4711");
    const before = await spent(c.token);

    const got = await c.ok("fetch", "/fetch", {
      url: `${env.TEST_RECEIVER_URL}/echo/egress-1/path?q=secret`,
      method: "POST",
      headers: { "x-team": "agents", "content-type": "application/json" },
      body: '{"a":1}',
    });
    expect(got.status).toBe(200);
    expect(got.egress_ips).toEqual(["127.0.0.2"]);
    const echo = JSON.parse(got.body!) as {
      method: string;
      url: string;
      remote_address: string;
      headers: Record<string, string>;
      body: string;
    };
    // The upstream was reached from the proxy's address, not the Worker's (127.0.0.1).
    expect(echo.remote_address).toMatch(/(^|:)127\.0\.0\.2$/);
    expect(echo).toMatchObject({ method: "POST", url: "/echo/egress-1/path?q=secret", body: '{"a":1}' });
    expect(echo.headers).toMatchObject({
      authorization: "Bearer sealed-key-4711",
      "x-team": "agents",
      "content-type": "application/json",
      host: RECEIVER.host,
    });
    expect(echo.headers["proxy-authorization"]).toBeUndefined();
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await spent(c.token)).toBe(before + usd(FETCH_PRICE));

    const log = await c.ok("list_requests", "/requests");
    expect(log.items).toHaveLength(1);
    expect(log.items[0]).toMatchObject({
      method: "POST",
      url: `${env.TEST_RECEIVER_URL}/echo/egress-1/path`,
      status: 200,
      bytes_sent: 7,
      bytes_received: got.bytes,
    });
    const record = await json(
      await call("GET", `/v1/resources/${c.id}`, { headers: { authorization: `Bearer ${c.mgmt}` } }),
    );
    expect(record.usage).toMatchObject({ requests: 1, bytes_received: got.bytes });
    expect((await c.ok("get_connector", "/connector")).egress_ips).toEqual(["127.0.0.2"]);
    const prices = await json(await call("GET", "/v1/prices"));
    expect(prices.egress).toEqual({ ips: ["127.0.0.2"] });
  });

  it(
    "returns binary and chunked answers byte-exact, HEAD without a body, " +
      "and the target's own error status (charged: the call completed)",
    async () => {
      const c = await connector();
      const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 31 + 7) & 255);
      await serveContent("egress-bin", bytes, { type: "application/octet-stream" });
      for (const path of ["content", "chunked"]) {
        const got = await c.ok("fetch", "/fetch", { url: `${env.TEST_RECEIVER_URL}/${path}/egress-bin` });
        expect(got.body, path).toBeNull();
        expect(
          Uint8Array.from(atob(got.body_base64!), (ch) => ch.charCodeAt(0)),
          path,
        ).toEqual(bytes);
        expect(got.bytes).toBe(bytes.length);
      }
      const sent = Uint8Array.from({ length: 300 }, (_, i) => 255 - (i % 256));
      const echoed = await c.ok("fetch", "/fetch", {
        url: `${env.TEST_RECEIVER_URL}/echo/egress-2`,
        method: "PUT",
        body_base64: btoa(String.fromCharCode(...sent)),
      });
      expect(JSON.parse(echoed.body!).size).toBe(300);
      const head = await c.ok("fetch", "/fetch", {
        url: `${env.TEST_RECEIVER_URL}/content/egress-bin`,
        method: "HEAD",
      });
      expect(head).toMatchObject({ status: 200, bytes: 0, body: "" });
      const before = await spent(c.token);
      await serveContent("egress-missing", "no such thing", { status: 404 });
      const missing = await c.ok("fetch", "/fetch", { url: `${env.TEST_RECEIVER_URL}/content/egress-missing` });
      expect(missing).toMatchObject({ status: 404, body: "no such thing" });
      expect(await spent(c.token)).toBe(before + usd(FETCH_PRICE));
    },
  );

  it(
    "refuses, uncharged: a host or port off the list (403), an answer past the cap (413), " +
      "a slow or unreachable target (502), bad input (422)",
    async () => {
      const c = await connector({ allowed_hosts: [RECEIVER.host, "*.example.org"], max_response_bytes: 1000 });
      await serveContent("egress-big", "x".repeat(5000));
      const before = await spent(c.token);
      const refusals: [Record<string, unknown>, number][] = [
        [{ url: "https://api.example.net/" }, 403],
        [{ url: "https://example.org/" }, 403],
        [{ url: `http://${RECEIVER.hostname}:1/` }, 403],
        [{ url: `${env.TEST_RECEIVER_URL}/content/egress-big` }, 413],
        [{ url: `${env.TEST_RECEIVER_URL}/chunked/egress-big` }, 413],
        [{ url: `${env.TEST_RECEIVER_URL}/slow/3000/egress-slow`, timeout_seconds: 1 }, 502],
        [{ url: `http://user:pw@${RECEIVER.host}/` }, 422],
        [{ url: `ftp://${RECEIVER.host}/` }, 422],
        [{ url: `${env.TEST_RECEIVER_URL}/echo/x`, headers: { "x-evil": "a\r\nInjected: yes" } }, 422],
        [{ url: `${env.TEST_RECEIVER_URL}/echo/x`, headers: { host: "elsewhere" } }, 422],
        [{ url: `${env.TEST_RECEIVER_URL}/echo/x`, headers: { "proxy-authorization": "Basic eA==" } }, 422],
        [{ url: `${env.TEST_RECEIVER_URL}/echo/x`, method: "TRACE" }, 422],
        [{ url: `${env.TEST_RECEIVER_URL}/echo/x`, body: "a", body_base64: "YQ==" }, 422],
        [{ url: `${env.TEST_RECEIVER_URL}/echo/x`, timeout_seconds: 0 }, 422],
        [{ url: `${env.TEST_RECEIVER_URL}/echo/x`, surprise: true }, 422],
      ];
      for (const [input, status] of refusals) {
        const problem = await c.refused("fetch", "/fetch", input);
        expect(problem.status, JSON.stringify(input)).toBe(status);
      }
      expect(await spent(c.token)).toBe(before);
      expect((await c.ok("list_requests", "/requests")).items).toHaveLength(0);
    },
  );

  it("a target nobody answers at: 502 through the proxy, uncharged", async () => {
    const c = await connector({ allowed_hosts: ["127.0.0.1:9"] });
    const before = await spent(c.token);
    const problem = await c.refused("fetch", "/fetch", { url: "http://127.0.0.1:9/" });
    expect(problem).toMatchObject({ status: 502, code: "upstream_failed" });
    expect(await spent(c.token)).toBe(before);
  });

  it("refuses allowlists it cannot keep (422, nothing charged)", async () => {
    const { token } = await buyCredits(1);
    const before = await spent(token);
    for (const hosts of [
      [],
      ["*"],
      ["*.com"],
      ["*.127.0.0.1"],
      ["http://example.com/"],
      ["example.com/path"],
      ["user@example.com"],
      ["exa mple.com"],
      ["a\u0000b.com"],
      Array(101).fill("example.com"),
    ]) {
      const res = await call("POST", "/v1/egress-connectors", {
        body: { allowed_hosts: hosts },
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status, JSON.stringify(hosts).slice(0, 80)).toBe(422);
    }
    expect(await spent(token)).toBe(before);
  });

  it("matches hosts as written: exact names, wildcards below a domain (not the domain), ports when given", () => {
    const list = ["api.example.com", "*.example.org", "10.0.0.1:8443"];
    const ok = (url: string) => allowed(list, new URL(url));
    expect(ok("https://api.example.com/x")).toBe(true);
    expect(ok("https://API.Example.com./x")).toBe(true);
    expect(ok("https://www.api.example.com/")).toBe(false);
    expect(ok("https://a.example.org/")).toBe(true);
    expect(ok("https://a.b.example.org/")).toBe(true);
    expect(ok("https://example.org/")).toBe(false);
    expect(ok("https://badexample.org/")).toBe(false);
    expect(ok("https://10.0.0.1:8443/")).toBe(true);
    expect(ok("https://10.0.0.1/")).toBe(false);
    expect(ok("https://0x0a.0.0.1:8443/")).toBe(true);
  });
});

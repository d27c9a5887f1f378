/**
 * Regressions for the faults fuzzing found (issue 10), each through HTTP: what the
 * table-driven bad-input contract cannot see from a schema alone. Charges are read
 * from the signed receipts: a call that did not answer 2xx is never among them.
 */
import { createExecutionContext, env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { signedDownloadUrl } from "../../src/kind/downloads";
import {
  ORIGIN,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  mcpTool,
  publicUrl,
  received,
  type Problem,
  type Receipt,
} from "../harness";

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

async function chargedRequests(token: string): Promise<Set<string>> {
  const res = await call("GET", "/v1/receipts", { headers: { authorization: `Bearer ${token}` } });
  return new Set((await json<Receipt>(res)).statement.charges.map((c) => c.request_id));
}

function putBytes(
  kind: string,
  id: string,
  mgmt: string,
  credit: string,
  body: string,
  type = "application/octet-stream",
) {
  return SELF.fetch(`${ORIGIN}/v1/${kind}/${id}/content`, {
    method: "PUT",
    body,
    headers: {
      ...managed(mgmt, credit),
      "content-type": type,
      "content-length": String(new TextEncoder().encode(body).length),
    },
  });
}

describe("stored types and file names", () => {
  it("refuses control characters in a content type or file name at create, for blobs and objects", async () => {
    const { token } = await buyCredits(1);
    for (const kind of ["blobs", "objects"]) {
      for (const [field, value] of <[string, string][]>[
        ["content_type", "text/plain\u0000"],
        ["content_type", 'text/plain; a="x\ny"'],
        ["filename", "a\u0000b.txt"],
        ["filename", "../etc/passwd"],
        ["filename", "a\u007fb"],
      ]) {
        const res = await call("POST", `/v1/${kind}`, {
          body: { [field]: value },
          headers: { authorization: `Bearer ${token}` },
        });
        expect(res.status, `${kind} ${field}=${JSON.stringify(value)}`).toBe(422);
        expect((await json<Problem>(res)).errors![0]!.path).toBe(field);
      }
    }
    expect((await chargedRequests(token)).size).toBe(0);
  });

  it("refuses an upload whose Content-Type is not a media type, uncharged", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("blobs", token);
    const res = await putBytes("blobs", id, mgmt, token, "x", "text/plain; name=caf\u00e9");
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ code: "validation_failed", errors: [{ path: "header.content-type" }] });
    expect((await chargedRequests(token)).has(res.headers.get("x-request-id")!)).toBe(false);
  });

  it("serves any Unicode file name as RFC 8187 filename*, on the API route and the public link", async () => {
    const { token } = await buyCredits(1);
    const name = 'Bericht über Q3 — 東京 "final".pdf';
    const { id, mgmt, record } = await createResource("blobs", token, {
      filename: name,
      content_type: "application/pdf",
      public: true,
    });
    expect((await putBytes("blobs", id, mgmt, token, "%PDF-1.7")).status).toBe(200);
    for (const res of [
      await call("GET", `/v1/blobs/${id}/content`, { headers: managed(mgmt, token) }),
      await SELF.fetch(publicUrl(record)),
    ]) {
      expect(res.status).toBe(200);
      const disposition = res.headers.get("content-disposition")!;
      expect(disposition).toMatch(/^attachment; filename="[\x20-\x7e]+"; filename\*=UTF-8''/);
      expect(decodeURIComponent(disposition.split("filename*=UTF-8''")[1]!)).toBe(name);
      expect(await res.text()).toBe("%PDF-1.7");
    }
  });

  it("serves bytes stored with a type that can't be a header (older data) as octet-stream, not a 500", async () => {
    const { token } = await buyCredits(1);
    const { id, record } = await createResource("blobs", token);
    const key = `${id}/legacy`;
    await env.BUCKET.put(key, "old bytes", {
      httpMetadata: { contentType: "text/plain\u0000evil", contentDisposition: 'attachment; filename="a\u0001.txt"' },
    });
    const link = signedDownloadUrl(env, ORIGIN, key, Date.parse(record.expires_at));
    const res = await SELF.fetch(link);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-disposition")).toBeNull();
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await res.text()).toBe("old bytes");
  });
});

describe("a download that fails is never charged", () => {
  it("answers 404 problem+json, uncharged, when the stored bytes are gone", async () => {
    const { token } = await buyCredits(1);
    for (const kind of ["blobs", "objects"]) {
      const { id, mgmt } = await createResource(kind, token);
      expect((await putBytes(kind, id, mgmt, token, "hello")).status).toBe(200);
      const ok = await call("GET", `/v1/${kind}/${id}/content`, { headers: managed(mgmt, token) });
      expect(await ok.text()).toBe("hello");
      // The bytes vanish from R2 underneath the resource (an outage, an operator's mistake).
      for (const o of (await env.BUCKET.list({ prefix: `${id}/` })).objects) await env.BUCKET.delete(o.key);
      const gone = await call("GET", `/v1/${kind}/${id}/content`, { headers: managed(mgmt, token) });
      expect(gone.status).toBe(404);
      expect(gone.headers.get("content-type")).toContain("application/problem+json");
      const charged = await chargedRequests(token);
      expect(charged.has(ok.headers.get("x-request-id")!), `${kind}: the good download`).toBe(true);
      expect(charged.has(gone.headers.get("x-request-id")!), `${kind}: the failed download`).toBe(false);
    }
  });
});

describe("times at or before the epoch mean now", () => {
  for (const at of ["1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "0001-01-01T00:00:00Z"]) {
    it(`a wakeup at ${at} is created and fires at once, once`, async () => {
      const { token } = await buyCredits(1);
      const name = `epoch-wakeup-${crypto.randomUUID().slice(0, 8)}`;
      const { id, mgmt, record } = await createResource("wakeups", token, {
        url: `${env.TEST_RECEIVER_URL}/ok/${name}`,
        at,
      });
      expect(Date.parse(String(record.status?.fire_at))).toBeGreaterThan(Date.now() - 60_000);
      expect(await received(name, 1)).toHaveLength(1);
      const status = await json(await call("GET", `/v1/wakeups/${id}`, { headers: managed(mgmt, token) }));
      expect(status.status).toBe("delivered");
    });
  }

  it("a delayed message at the epoch is charged once, delivered once, and the channel keeps working", async () => {
    const { token } = await buyCredits(1);
    const name = `epoch-delayed-${crypto.randomUUID().slice(0, 8)}`;
    const { id, mgmt } = await createResource("delayed", token, { url: `${env.TEST_RECEIVER_URL}/ok/${name}` });
    const first = await call("POST", `/v1/delayed/${id}/messages`, {
      body: { body: { n: 1 }, deliver_at: "1970-01-01T00:00:00Z" },
      headers: managed(mgmt, token),
    });
    expect(first.status, await first.clone().text()).toBe(200);
    const second = await call("POST", `/v1/delayed/${id}/messages`, {
      body: { body: { n: 2 }, delay_seconds: 0 },
      headers: managed(mgmt, token),
    });
    expect(second.status).toBe(200);
    const got = await received(name, 2);
    expect(got.map((r) => JSON.parse(r.body).n).sort()).toEqual([1, 2]);
    const charged = await chargedRequests(token);
    expect(charged.has(first.headers.get("x-request-id")!)).toBe(true);
  });
});

describe("empty uploads answer at once", () => {
  it("stores an empty blob or object (REST and MCP), and refuses an empty part", async () => {
    const { token } = await buyCredits(1);
    for (const kind of ["blobs", "objects"]) {
      const { id, mgmt } = await createResource(kind, token);
      const res = await putBytes(kind, id, mgmt, token, "");
      expect(res.status, `${kind}: ${await res.clone().text()}`).toBe(200);
      expect(await json(res)).toMatchObject({ size: 0, sha256: EMPTY_SHA256 });
      const down = await call("GET", `/v1/${kind}/${id}/content`, { headers: managed(mgmt, token) });
      expect(down.status).toBe(200);
      expect(await down.text()).toBe("");
      const tool = await mcpTool(token, `${kind}_upload`, { id, management_token: mgmt, content_base64: "" });
      expect(tool.isError, JSON.stringify(tool)).toBeFalsy();
      expect(tool.structuredContent).toMatchObject({ size: 0, sha256: EMPTY_SHA256 });
    }
    const { id, mgmt } = await createResource("objects", token);
    const upload = await json(
      await call("POST", `/v1/objects/${id}/uploads`, { body: {}, headers: managed(mgmt, token) }),
    );
    const part = await SELF.fetch(`${ORIGIN}/v1/objects/${id}/uploads/${upload.upload_id}/parts/1`, {
      method: "PUT",
      body: "",
      headers: { ...managed(mgmt, token), "content-length": "0" },
    });
    expect(part.status).toBe(422);
    expect(await json(part)).toMatchObject({ errors: [{ path: "header.content-length" }] });
  });
});

describe("JSON nested past 64 levels", () => {
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);

  it("is a 422 naming the field, at 5,000 levels; 64 levels below a field are fine", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("vaults", token);
    const put = (value: string) =>
      SELF.fetch(`${ORIGIN}/v1/vaults/${id}/keys/k`, {
        method: "PUT",
        body: `{"value":${value}}`,
        headers: { ...managed(mgmt, token), "content-type": "application/json" },
      });
    const refused = await put(deep(5000));
    expect(refused.status).toBe(422);
    expect(await json(refused)).toMatchObject({ code: "validation_failed", errors: [{ path: "value" }] });
    expect((await put(deep(64))).status).toBe(200);
    expect((await put(deep(65))).status).toBe(422);
  });

  it("is a tool error over MCP for a deep argument, and a JSON-RPC error for a deep envelope", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("vaults", token);
    const args = `{"id":"${id}","management_token":"${mgmt}","key":"k","value":${deep(100)}}`;
    const res = await SELF.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${token}`,
        "mcp-protocol-version": "2025-11-25",
      },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"vaults_put","arguments":${args}}}`,
    });
    expect((await json(res)).result).toMatchObject({
      isError: true,
      structuredContent: { status: 422, errors: [{ path: "value" }] },
    });
    const envelope = await SELF.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body:
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_prices","arguments":{"x":` +
        `${deep(5000)}}}}`,
    });
    expect(await json(envelope)).toMatchObject({ error: { code: -32600 } });
  });

  it("is a 422 on a public address that parses JSON", async () => {
    const { token } = await buyCredits(1);
    const { record } = await createResource("debounce", token, {
      url: `${env.TEST_RECEIVER_URL}/ok/deep`,
      quiet_seconds: 60,
    });
    const res = await SELF.fetch(publicUrl(record), {
      method: "POST",
      body: deep(5000),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ errors: [{ path: "event" }] });
  });
});

describe("outbound header values and hosts", () => {
  it("refuses CR, LF and NUL in configured headers with 422 (create, per call), not 502 or a retry loop", async () => {
    const { token } = await buyCredits(1);
    const url = `${env.TEST_RECEIVER_URL}/ok/headers`;
    for (const value of ["a\r\nInjected: 1", "a\u0000b", "a\nb"]) {
      const wakeup = await call("POST", "/v1/wakeups", {
        body: { url, delay_seconds: 60, headers: { "X-Test": value } },
        headers: { authorization: `Bearer ${token}` },
      });
      expect(wakeup.status).toBe(422);
      expect((await json<Problem>(wakeup)).errors![0]!.path).toMatch(/^headers/);
    }
    const attest = await createResource("attest", token);
    const fetched = await call("POST", `/v1/attest/${attest.id}/fetches`, {
      body: { url, headers: { "X-Test": "a\r\nb" } },
      headers: managed(attest.mgmt, token),
    });
    expect(fetched.status).toBe(422);
    const object = await createResource("objects", token);
    const copied = await call("POST", `/v1/objects/${object.id}/fetch`, {
      body: { source_url: url, headers: { "X-Test": "a\u0000b" } },
      headers: managed(object.mgmt, token),
    });
    expect(copied.status).toBe(422);
    expect((await chargedRequests(token)).size).toBe(2); // the two resources' creates
  });

  it("refuses loopback and metadata names with a trailing dot when private targets are off", async () => {
    const { token } = await buyCredits(1);
    const strict = { ...env, ALLOW_PRIVATE_TARGETS: "false" };
    for (const url of [
      "http://localhost./x",
      "http://metadata.google.internal./computeMetadata/v1/",
      "http://LOCALHOST../",
    ]) {
      const res = await worker.fetch(
        new Request(`${ORIGIN}/v1/wakeups`, {
          method: "POST",
          body: JSON.stringify({ url, delay_seconds: 60 }),
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        }),
        strict,
        createExecutionContext(),
      );
      expect(res.status, url).toBe(422);
      expect((await json<Problem>(res)).errors![0]!.path).toBe("url");
    }
  });
});

describe("defaults never make a request invalid", () => {
  it("an idempotency resource with a 60 s window takes a lock timeout that fits it", async () => {
    const { token } = await buyCredits(1);
    const { record } = await createResource("idempotency", token, { window_seconds: 60 });
    expect(record.config).toMatchObject({ window_seconds: 60, lock_timeout_seconds: 60 });
  });

  it("a counter bounded above zero starts at its lower bound", async () => {
    const { token } = await buyCredits(1);
    expect((await createResource("counters", token, { min: 5 })).record.usage.value).toBe(5);
    expect((await createResource("counters", token, { min: -10, max: -3 })).record.usage.value).toBe(-3);
  });

  it("an unknown field is a 422 naming it, not silently ignored", async () => {
    const { token } = await buyCredits(1);
    const res = await call("POST", "/v1/counters", {
      body: { maximum: 10 },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await json(res))).toContain("maximum");
  });
});

/**
 * attest, per docs/kinds.md: the service fetches a URL and answers with the content and a
 * receipt (JWS) anyone can verify against the JWKS; the bytes stay in R2 for the TTL.
 */
import { SELF, env, runInDurableObject } from "cloudflare:test";
import { compactVerify, createLocalJWKSet, type JWK } from "jose";
import { expect, it } from "vitest";
import type { attest } from "../../src/kinds/time/attest";
import type { exportAll } from "../../src/kinds/time/attest/store";
import type { OpNames, OpOutput } from "../../src/kind/kind";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  serveContent,
  r2Keys,
  type Problem,
  type ResourceExport,
} from "../harness";

/** What attest's op `N` answers. */
type Out<N extends OpNames<typeof attest>> = OpOutput<typeof attest, N>;

const receiver = env.TEST_RECEIVER_URL;
const FETCH_USD = 0.002;
const OP_USD = 0.0001;
const DAY_USD = 0.001;

async function sha256Hex(bytes: Uint8Array | ArrayBuffer): Promise<string> {
  return Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");
}

async function jwks() {
  return createLocalJWKSet(await json<{ keys: JWK[] }>(await call("GET", "/.well-known/jwks.json")));
}

async function setup(body: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const r = await createResource("attest", token, { ttl_seconds: 86400, ...body });
  const op = (method: string, path: string, payload?: unknown) =>
    call(method, `/v1/attest/${r.id}${path}`, { body: payload, headers: managed(r.mgmt, token) });
  return { token, ...r, op };
}

const name = () => crypto.randomUUID().slice(0, 8);

/** The stored bytes, through the signed link, as an agent without credentials would get them. */
const download = (url: string) => SELF.fetch(url);

it("answers content and a receipt verified by the JWKS; content_url is byte-exact; an edited byte fails", async () => {
  const page = `<!doctype html><title>Prices</title><p>Widget: 12 € — ${name()}</p>`;
  const url = await serveContent(name(), page, { type: "text/html; charset=utf-8" });
  const a = await setup();
  const res = await a.op("POST", "/fetches", {
    url,
    headers: { "Accept-Language": "de", authorization: "Bearer sk_very_secret" },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const f = await json<Out<"fetch">>(res);

  expect(f.fetch_id).toMatch(/^att_[0-9a-f]{32}$/);
  expect(f.content).toEqual({ encoding: "text", data: page });
  const verified = await compactVerify(f.receipt.jws, await jwks());
  expect(verified.protectedHeader).toMatchObject({ alg: "RS256", typ: "fetch-receipt+json", kid: "test-key-1" });
  const payload = JSON.parse(new TextDecoder().decode(verified.payload));
  expect(payload).toEqual(f.receipt.payload);
  expect(payload).toEqual({
    iss: "https://zeitvault.test",
    receipt_id: f.fetch_id,
    resource_id: a.id,
    method: "GET",
    url,
    final_url: url,
    request_headers: ["accept-language", "authorization", "user-agent"],
    status: 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-language": null,
      date: expect.any(String),
      etag: null,
      "last-modified": null,
    },
    body_sha256: await sha256Hex(new TextEncoder().encode(page)),
    body_size: new TextEncoder().encode(page).length,
    fetched_at: expect.any(String),
  });
  expect(Math.abs(Date.parse(payload.fetched_at) - Date.now())).toBeLessThan(60_000);
  expect(JSON.stringify(f)).not.toContain("sk_very_secret"); // header values are never signed nor returned

  // The published schema documents exactly the fields a receipt carries, all of them always present.
  const doc = await json<{
    components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> };
  }>(await call("GET", "/openapi.json?kinds=attest"));
  const documented = doc.components.schemas.FetchReceiptPayload!;
  expect(Object.keys(documented.properties).sort()).toEqual(Object.keys(payload).sort());
  expect([...documented.required].sort()).toEqual(Object.keys(payload).sort());

  // The kept bytes: exactly what was served, and what the receipt's digest says.
  const dl = await download(f.content_url);
  expect(dl.status).toBe(200);
  const bytes = new Uint8Array(await dl.arrayBuffer());
  expect(new TextDecoder().decode(bytes)).toBe(page);
  expect(await sha256Hex(bytes)).toBe(payload.body_sha256);
  expect(dl.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(dl.headers.get("content-disposition")).toMatch(/^attachment/);
  expect(await r2Keys(a.id)).toEqual([`${a.id}/attest/${f.fetch_id}`]);

  // One byte of the payload changed (the status 200 → 201): the signature no longer holds.
  const [head, body, sig] = f.receipt.jws.split(".");
  const text = atob(body!.replace(/-/g, "+").replace(/_/g, "/"));
  const edited = text.replace('"status":200', '"status":201');
  expect(edited).not.toBe(text);
  const tampered = `${head}.${btoa(edited).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_")}.${sig}`;
  await expect(compactVerify(tampered, await jwks())).rejects.toThrow();

  expect((await balanceOf(a.token)).spent_usd).toBeCloseTo(DAY_USD + FETCH_USD, 6);
});

it("returns binary bodies as base64, large ones only by content_url, and HEAD attests an empty body", async () => {
  const a = await setup();
  const small = crypto.getRandomValues(new Uint8Array(1000));
  const smallUrl = await serveContent(name(), small, { type: "image/png" });
  const s = await json<Out<"fetch">>(await a.op("POST", "/fetches", { url: smallUrl }));
  expect(s.content!.encoding).toBe("base64");
  expect(Uint8Array.from(atob(s.content!.data), (c) => c.charCodeAt(0))).toEqual(small);
  expect(s.body_sha256).toBe(await sha256Hex(small));

  const large = new Uint8Array(300 * 1024);
  for (let i = 0; i < large.length; i += 65536) crypto.getRandomValues(large.subarray(i, i + 65536));
  const largeUrl = await serveContent(name(), large, { type: "application/octet-stream" });
  const l = await json<Out<"fetch">>(await a.op("POST", "/fetches", { url: largeUrl, receipt_headers: ["*"] }));
  expect(l.content).toBeNull();
  expect(l.receipt.payload.headers["content-length"]).toBe(String(large.length)); // `*` records every header
  const bytes = new Uint8Array(await (await download(l.content_url)).arrayBuffer());
  expect(bytes.length).toBe(large.length);
  expect(await sha256Hex(bytes)).toBe(l.receipt.payload.body_sha256);
  expect(l.receipt.payload.body_sha256).toBe(await sha256Hex(large));

  const h = await json<Out<"fetch">>(
    await a.op("POST", "/fetches", { url: smallUrl, method: "HEAD", receipt_headers: ["Content-Type"] }),
  );
  expect(h.receipt.payload).toMatchObject({
    method: "HEAD",
    status: 200,
    body_size: 0,
    headers: { "content-type": "image/png" },
  });
  expect(h.body_sha256).toBe(await sha256Hex(new Uint8Array(0)));
});

it("follows redirects and records the final URL; a target's 404 is attested and charged", async () => {
  const a = await setup();
  const n = name();
  await serveContent(n, "moved here");
  const redirected = await json<Out<"fetch">>(await a.op("POST", "/fetches", { url: `${receiver}/redirect/${n}` }));
  expect(redirected.receipt.payload).toMatchObject({
    url: `${receiver}/redirect/${n}`,
    final_url: `${receiver}/content/${n}`,
    status: 200,
  });
  expect(redirected.content!.data).toBe("moved here");

  const missing = await serveContent(name(), "no such page", { status: 404 });
  const res = await a.op("POST", "/fetches", { url: missing });
  expect(res.status).toBe(200);
  const f = await json<Out<"fetch">>(res);
  expect(f.status).toBe(404);
  expect(f.receipt.payload.status).toBe(404);
  await compactVerify(f.receipt.jws, await jwks());
  expect((await balanceOf(a.token)).spent_usd).toBeCloseTo(DAY_USD + 2 * FETCH_USD, 6);
});

it("refuses uncharged, keeping nothing: egress-guard refusal 422, over max_bytes 413, failed fetch 502", async () => {
  const a = await setup();
  const spent = (await balanceOf(a.token)).spent_usd;
  for (const url of ["ftp://example.com/file", "file:///etc/passwd", `http://user:pw@127.0.0.1:1/`]) {
    const res = await a.op("POST", "/fetches", { url });
    expect(res.status, url).toBe(422);
    const problem = await json<Problem>(res);
    expect(problem.code).toBe("validation_failed");
    expect(problem.errors!.map((e: { path: string }) => e.path)).toContain("url");
  }
  const refused = await a.op("POST", "/fetches", { url: "http://127.0.0.1:1/nothing-listens-here" });
  expect(refused.status).toBe(502);
  expect((await json(refused)).code).toBe("upstream_failed");

  const big = await serveContent(name(), "x".repeat(100));
  const overCap = await a.op("POST", "/fetches", { url: big, max_bytes: 10 });
  expect(overCap.status).toBe(413);
  expect((await json(overCap)).code).toBe("payload_too_large");

  const capped = await setup({ max_bytes: 50 }); // the resource's own cap applies too
  expect((await capped.op("POST", "/fetches", { url: big })).status).toBe(413);

  expect((await balanceOf(a.token)).spent_usd).toBeCloseTo(spent, 6);
  expect((await balanceOf(capped.token)).spent_usd).toBeCloseTo(DAY_USD, 6);
  expect(await r2Keys(a.id)).toEqual([]);
  expect(await r2Keys(capped.id)).toEqual([]);
});

it("a fetch a sub-token's cap cannot pay is refused before fetching: nothing charged, fetched or stored", async () => {
  const a = await setup();
  const sub = await json<{ credit_token: string }>(
    await call("POST", "/v1/credits/subtokens", {
      body: { cap_usd: 0.001, label: "tight", days: 1 },
      headers: { authorization: `Bearer ${a.token}` },
    }),
  );
  const target = name();
  const url = await serveContent(target, "worth keeping");
  const res = await call("POST", `/v1/attest/${a.id}/fetches`, {
    body: { url },
    headers: managed(a.mgmt, sub.credit_token),
  });
  expect(res.status).toBe(402);
  expect((await json(res)).code).toBe("cap_exceeded");
  expect(await r2Keys(a.id)).toEqual([]);
  expect((await balanceOf(a.token)).spent_usd).toBeCloseTo(DAY_USD, 6);
  expect((await json(await a.op("GET", "/fetches"))).items).toEqual([]);
  expect(await (await fetch(`${env.TEST_RECEIVER_URL}/_log/${target}`)).json()).toEqual([]);
});

it("enforces the per-resource limits before charging: 422 at 1000 fetches, 413 past the byte quota", async () => {
  const a = await setup();
  const url = await serveContent(name(), "hello");
  const stub = env.RESOURCES.get(env.RESOURCES.idFromName(a.id));
  const fill = (rows: number, size: number) =>
    runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec("DELETE FROM attest_fetches");
      for (let i = 0; i < rows; i++) {
        state.storage.sql.exec(
          "INSERT INTO attest_fetches (fetch_id, jws, size, content_type, created_at) VALUES (?, 'x', ?, NULL, 0)",
          `att_${String(i).padStart(32, "0")}`,
          size,
        );
      }
    });

  await fill(1000, 1);
  const full = await a.op("POST", "/fetches", { url });
  expect(full.status).toBe(422);
  expect((await json<Problem>(full)).errors![0]!.path).toBe("fetches");

  await fill(1, 1024 * 1024 * 1024 - 3); // 5 bytes more would pass the 1 GiB quota
  const over = await a.op("POST", "/fetches", { url });
  expect(over.status).toBe(413);
  expect((await json(over)).code).toBe("payload_too_large");

  expect((await balanceOf(a.token)).spent_usd).toBeCloseTo(DAY_USD, 6);
  expect(await r2Keys(a.id)).toEqual([]); // the fetched bytes were not kept
});

it("lists fetches with a cursor, gets one by fetch_id, exports all, and keeps nothing after cancel", async () => {
  const a = await setup();
  const bodies = ["one", "two", "three"];
  const made: Out<"fetch">[] = [];
  for (const b of bodies)
    made.push(await json<Out<"fetch">>(await a.op("POST", "/fetches", { url: await serveContent(name(), b) })));
  const [f0, f1, f2] = made as [Out<"fetch">, Out<"fetch">, Out<"fetch">];

  const first = await json<Out<"fetches">>(await a.op("GET", "/fetches?limit=2"));
  expect(first.items.map((i: { fetch_id: string }) => i.fetch_id)).toEqual([f0.fetch_id, f1.fetch_id]);
  expect(first.items[0]!).not.toHaveProperty("content");
  const second = await json<Out<"fetches">>(await a.op("GET", `/fetches?limit=2&cursor=${first.next_cursor}`));
  expect(second.items.map((i: { fetch_id: string }) => i.fetch_id)).toEqual([f2.fetch_id]);
  expect(second.next_cursor).toBeNull();

  const one = await json(await a.op("GET", `/fetch?fetch_id=${f1.fetch_id}`));
  expect(one).toEqual({ ...f1, content: { encoding: "text", data: "two" } });
  expect((await json(await a.op("GET", `/fetch?fetch_id=${f1.fetch_id}&include_content=false`))).content).toBeNull();
  const unknown = await a.op("GET", `/fetch?fetch_id=att_${"0".repeat(32)}`);
  expect(unknown.status).toBe(404);

  const status = await json(await call("GET", `/v1/resources/${a.id}`, { headers: managed(a.mgmt) }));
  expect(status.usage).toEqual({ fetches: 3, bytes: 11 });

  const exported = await json<ResourceExport<ReturnType<typeof exportAll>>>(
    await call("GET", `/v1/resources/${a.id}/export`, { headers: managed(a.mgmt) }),
  );
  expect(exported.data.fetches).toHaveLength(3);
  for (const [i, f] of exported.data.fetches.entries()) {
    expect(f.receipt.jws).toBe(made[i]!.receipt.jws);
    expect(await (await download(f.content_url)).text()).toBe(bodies[i]);
  }

  // the 404 get is free
  expect((await balanceOf(a.token)).spent_usd).toBeCloseTo(DAY_USD + 3 * FETCH_USD + 4 * OP_USD, 6);

  expect((await call("DELETE", `/v1/resources/${a.id}`, { headers: managed(a.mgmt) })).status).toBe(200);
  expect(await r2Keys(a.id)).toEqual([]);
  expect((await download(f0.content_url)).status).toBe(404);
});

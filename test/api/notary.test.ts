/**
 * notary, per docs/kinds.md: a SHA-256 (or data, hashed server-side) is stamped with an
 * RFC 3161 TimeStampResp that the real `openssl ts -verify` accepts against the
 * published certificate (through the local OpenSSL peer, test/peers/openssl.ts);
 * the JSON form; the hash chain, recomputed here from its documented rule; nonce;
 * lookups; limits; export. The chain is recomputed with WebCrypto, not the service's code.
 */
import { env, runInDurableObject } from "cloudflare:test";
import type { ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  stubOf,
  type Problem,
  type ResourceExport,
} from "../harness";
import { notary } from "../../src/kinds/time/notary";
import type { exportAll } from "../../src/kinds/time/notary/store";
import type { OpNames, OpOutput } from "../../src/kind/kind";
import { MAX_STAMPS } from "../../src/kinds/time/notary/schema";
import { DEFAULT_POLICY_OID, generateTsaSecrets, tsaPolicy, tsaSigner } from "../../src/kinds/time/notary/tsa-signer";
import type { Env } from "../../src/env";
import type { OpensslAnswer } from "../peers/openssl";

const priceOf = (op: string) => notary.ops.find((o) => o.name === op)!.priceMicro;

/** What notary's op `N` answers. */
type Out<N extends OpNames<typeof notary>> = OpOutput<typeof notary, N>;

const hex = (bytes: ArrayBuffer | Uint8Array) =>
  [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
const sha256 = async (bytes: Uint8Array) => hex(await crypto.subtle.digest("SHA-256", bytes));
const unbase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const base64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
const randomDigest = () => hex(crypto.getRandomValues(new Uint8Array(32)));

async function openssl(route: string, body: Record<string, string>): Promise<OpensslAnswer> {
  const res = await fetch(`${env.TEST_OPENSSL_URL}${route}`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

async function certificatePem(): Promise<string> {
  const res = await call("GET", "/v1/tsa/certificate.pem");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/pem-certificate-chain");
  return new TextDecoder().decode(await res.arrayBuffer()); // .text() would warn: the media type is not text/*
}

async function newNotary() {
  const { token } = await buyCredits(1);
  const created = await createResource("notary", token, { ttl_seconds: 86400 });
  const stamp = (body: Record<string, unknown>) =>
    call("POST", `/v1/notary/${created.id}/stamps`, { body, headers: managed(created.mgmt, token) });
  const get = async <T = Record<string, unknown>>(path: string) => {
    const res = await call("GET", `/v1/notary/${created.id}${path}`, { headers: managed(created.mgmt, token) });
    return { status: res.status, body: await json<T>(res) };
  };
  return { ...created, token, stamp, get };
}

async function stamped(res: Response) {
  expect(res.status, await res.clone().text()).toBe(200);
  return json<Out<"stamp">>(res);
}

describe("notary", () => {
  it("publishes its TSA certificate free: PEM and DER, timeStamping critical", async () => {
    const pem = await certificatePem();
    expect(pem).toBe(env.TSA_CERT_PEM);
    const der = await call("GET", "/v1/tsa/certificate.der");
    expect(der.headers.get("content-type")).toBe("application/pkix-cert");
    const body = pem.replace(/-----[A-Z ]+-----|\s/g, "");
    expect(base64(new Uint8Array(await der.arrayBuffer()))).toBe(body);

    const x509 = await openssl("/x509", { cert_pem: pem });
    expect(x509.status, x509.output).toBe(0);
    expect(x509.output).toMatch(/X509v3 Extended Key Usage: critical\s+Time Stamping/);
    expect(x509.output).toMatch(/Time Stamp signing : Yes/);

    const doc = await json<{
      paths: Record<string, { get?: unknown }>;
      components: { schemas: Record<string, { properties: Record<string, { description: string }> }> };
    }>(await call("GET", "/openapi.json?kinds=all"));
    expect(doc.paths["/v1/tsa/certificate.pem"]!.get).toBeDefined();
    expect(doc.components.schemas.NotaryStamp!.properties.chain!.description).toContain("prev_chain");
  });

  it("stamps a SHA-256: openssl ts -verify accepts it with the published certificate, not another hash", async () => {
    const n = await newNotary();
    const digest = randomDigest();
    const s = await stamped(await n.stamp({ sha256: digest.toUpperCase() }));
    expect(s).toMatchObject({
      seq: 1,
      sha256: digest,
      nonce: null,
      policy: DEFAULT_POLICY_OID,
      prev_chain: "0".repeat(64),
    });
    expect(s.serial).toMatch(/^[0-9a-f]{32}$/);
    expect(Math.abs(Date.parse(s.gen_time) - Date.now())).toBeLessThan(60_000);

    const cert = await certificatePem();
    const ok = await openssl("/ts-verify", { tsr: s.tsr, cert_pem: cert, digest });
    expect(ok.status, ok.output).toBe(0);
    expect(ok.output).toContain("Verification: OK");
    const wrong = await openssl("/ts-verify", { tsr: s.tsr, cert_pem: cert, digest: randomDigest() });
    expect(wrong.status).not.toBe(0);
    expect(wrong.output).toContain("FAILED");

    // What the token says, as OpenSSL reads it.
    const text = await openssl("/ts-text", { tsr: s.tsr });
    expect(text.output).toContain("Status: Granted.");
    expect(text.output).toContain("Version: 1");
    expect(text.output).toContain(`Policy OID: ${DEFAULT_POLICY_OID}`);
    expect(text.output).toContain("Hash Algorithm: sha256");
    expect(text.output).toContain(`Serial number: 0x${s.serial.toUpperCase()}`);
    expect(text.output).toContain("Accuracy: 0x01 seconds");
    expect(text.output).toContain("Nonce: unspecified");

    expect((await balanceOf(n.token)).spent_usd).toBeCloseTo((notary.dayPriceMicro + priceOf("stamp")) / 1e6, 6);
  });

  it("hashes data server-side (text and base64), checked with openssl ts -verify -data; echoes the nonce", async () => {
    const n = await newNotary();
    const cert = await certificatePem();
    const text = "Grüße, notary — 2026";
    const utf8 = new TextEncoder().encode(text);
    const a = await stamped(await n.stamp({ data: text, nonce: "00Ff12" }));
    expect(a.sha256).toBe(await sha256(utf8));
    expect(a.nonce).toBe("ff12");
    const verified = await openssl("/ts-verify", { tsr: a.tsr, cert_pem: cert, data_base64: base64(utf8) });
    expect(verified.status, verified.output).toBe(0);
    expect((await openssl("/ts-text", { tsr: a.tsr })).output).toContain("Nonce: 0xFF12");

    const bytes = crypto.getRandomValues(new Uint8Array(4096));
    const b = await stamped(await n.stamp({ data_base64: base64(bytes), nonce: "8000000000000000" }));
    expect(b.sha256).toBe(await sha256(bytes));
    expect((await openssl("/ts-verify", { tsr: b.tsr, cert_pem: cert, data_base64: base64(bytes) })).status).toBe(0);
    // A nonce with its top bit set stays positive.
    expect((await openssl("/ts-text", { tsr: b.tsr })).output).toContain("Nonce: 0x8000000000000000");
    const other = await openssl("/ts-verify", { tsr: b.tsr, cert_pem: cert, data_base64: base64(utf8) });
    expect(other.status).not.toBe(0);
  });

  it("keeps a hash chain anyone can recompute; lists, looks up and finds stamps; exports all", async () => {
    const n = await newNotary();
    const twice = randomDigest();
    const made = [];
    for (const body of [{ sha256: twice }, { data: "middle" }, { sha256: twice, nonce: "1" }])
      made.push(await stamped(await n.stamp(body)));

    // The documented rule, implemented here independently.
    let prev = "0".repeat(64);
    for (const s of made) {
      expect(s.prev_chain).toBe(prev);
      const line = [prev, String(s.seq), s.serial, s.sha256, s.gen_time, await sha256(unbase64(s.tsr))].join("\n");
      expect(s.chain).toBe(await sha256(new TextEncoder().encode(line)));
      prev = s.chain;
    }
    expect(made.map((s) => s.seq)).toEqual([1, 2, 3]);

    const first = await n.get("/stamps?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.items).toEqual(made.slice(0, 2));
    expect(first.body.next_cursor).toBe("2");
    const rest = await n.get(`/stamps?limit=2&cursor=${first.body.next_cursor}`);
    expect(rest.body).toEqual({ items: [made[2]], next_cursor: null });

    expect((await n.get("/stamps/lookup?seq=2")).body).toEqual(made[1]);
    expect((await n.get(`/stamps/lookup?serial=${made[2]!.serial.toUpperCase()}`)).body).toEqual(made[2]);
    expect((await n.get("/stamps/lookup?seq=9")).status).toBe(404);
    expect((await n.get("/stamps/lookup?seq=1&serial=ab")).status).toBe(422);
    expect((await n.get("/stamps/lookup")).status).toBe(422);

    const found = await n.get<Out<"find_stamps">>(`/stamps/find?sha256=${twice}`);
    expect(found.body.items.map((s: { seq: number }) => s.seq)).toEqual([1, 3]);
    expect((await n.get(`/stamps/find?sha256=${randomDigest()}`)).body.items).toEqual([]);
    expect((await n.get("/stamps/find?sha256=nothex")).status).toBe(422);

    const record = await json(await call("GET", `/v1/resources/${n.id}`, { headers: managed(n.mgmt) }));
    expect(record.usage).toEqual({ stamps: 3 });
    expect(record.status).toEqual({ stamps: 3, head: { seq: 3, chain: prev, gen_time: made[2]!.gen_time } });

    const exported = await json<ResourceExport<ReturnType<typeof exportAll>>>(
      await call("GET", `/v1/resources/${n.id}/export`, { headers: managed(n.mgmt) }),
    );
    expect(exported.data.stamps).toEqual(made);
    expect(exported.data.head_chain).toBe(prev);
    expect(exported.data.chain_rule).toContain("tsr_sha256");
  });

  it("refuses bad input (422), oversized data (413) and a full log (422), charging none of them", async () => {
    const n = await newNotary();
    const before = (await balanceOf(n.token)).spent_usd;
    const cases: [Record<string, unknown>, string][] = [
      [{}, "sha256"],
      [{ sha256: randomDigest(), data: "x" }, "sha256"],
      [{ sha256: "abc" }, "sha256"],
      [{ data_base64: "not base64!" }, "data_base64"],
      [{ data: "x", nonce: "0x12" }, "nonce"],
      [{ data: "x", nonce: "1".repeat(33) }, "nonce"],
    ];
    for (const [body, path] of cases) {
      const res = await n.stamp(body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect((await json<Problem>(res)).errors!.map((e: { path: string }) => e.path)).toContain(path);
    }

    const big = await n.stamp({ data: "x".repeat(512 * 1024 + 1) });
    expect(big.status).toBe(413);
    expect((await json(big)).code).toBe("payload_too_large");
    expect((await n.stamp({ data_base64: base64(new Uint8Array(600 * 1024)) })).status).toBe(413);

    // Fill the log to one short of full, as the stamps would have.
    await runInDurableObject(stubOf(n.id), (_o, state) => {
      for (let seq = 1; seq < MAX_STAMPS; seq++) {
        state.storage.sql.exec(
          "INSERT INTO notary_stamps (seq, serial, sha256, gen_time, nonce, policy, tsr, prev_chain, " +
            "chain) VALUES (?, ?, ?, 0, NULL, '1.2', ?, ?, ?)",
          seq,
          `s${seq}`,
          "0".repeat(64),
          new ArrayBuffer(1),
          "0".repeat(64),
          "0".repeat(64),
        );
      }
    });
    const last = await stamped(await n.stamp({ sha256: randomDigest() }));
    expect(last.seq).toBe(MAX_STAMPS);
    const full = await n.stamp({ sha256: randomDigest() });
    expect(full.status).toBe(422);
    expect((await json<Problem>(full)).errors![0]!.path).toBe("stamps");

    expect((await balanceOf(n.token)).spent_usd).toBeCloseTo(before + priceOf("stamp") / 1e6, 6);
  });
});

describe("TSA keys and policy", () => {
  const base = { SERVICE_NAME: "zeitvault" } as Env;

  it("production refuses to stamp without its key and certificate, or with a certificate of another key", async () => {
    await expect(tsaSigner({ ...base, ENVIRONMENT: "production" })).rejects.toThrow(/not configured/);
    const other = await generateTsaSecrets("other");
    await expect(
      tsaSigner({
        ...base,
        ENVIRONMENT: "production",
        TSA_PRIVATE_JWK: other.TSA_PRIVATE_JWK,
        TSA_CERT_PEM: env.TSA_CERT_PEM,
      }),
    ).rejects.toThrow(/does not certify/);
    const configured = await tsaSigner({
      ...base,
      ENVIRONMENT: "production",
      TSA_PRIVATE_JWK: env.TSA_PRIVATE_JWK,
      TSA_CERT_PEM: env.TSA_CERT_PEM,
    });
    expect(configured.certificatePem).toBe(env.TSA_CERT_PEM);
  });

  it("development without secrets signs with a key and certificate made once per isolate", async () => {
    const dev = { ...base, ENVIRONMENT: "development" };
    const signer = await tsaSigner(dev);
    expect(await tsaSigner(dev)).toBe(signer);
    const x509 = await openssl("/x509", { cert_pem: signer.certificatePem });
    expect(x509.output).toContain("CN = zeitvault development TSA");
    expect(x509.output).toMatch(/Time Stamp signing : Yes/);
  });

  it("takes TSA_POLICY_OID when set, and refuses one that is no OID", () => {
    expect(tsaPolicy({})).toBe(DEFAULT_POLICY_OID);
    expect(tsaPolicy({ TSA_POLICY_OID: "1.3.6.1.4.1.99999.1" })).toBe("1.3.6.1.4.1.99999.1");
    expect(() => tsaPolicy({ TSA_POLICY_OID: "1.3.x" })).toThrow(/dotted OID/);
  });

  it("lists the notary's operations as MCP tools", async () => {
    const res = await call("POST", "/mcp?toolsets=notary", { body: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    const names = (await json<{ result: ListToolsResult }>(res)).result.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "create_notary",
        "notary_stamp",
        "notary_stamps",
        "notary_get_stamp",
        "notary_find_stamps",
      ]),
    );
  });
});

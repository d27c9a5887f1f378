/**
 * vaults, per docs/kinds.md: get/put/delete, per-key TTL, prefix listing with a cursor, metadata, compare-and-set,
 * batch, 1 MiB values.
 */
import { SELF, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { vaults } from "../../src/kinds/memory/vaults";
import type { exportVault } from "../../src/kinds/memory/vaults/listing";
import type { Entry, putResult } from "../../src/kinds/memory/vaults/schema";
import type { z } from "@hono/zod-openapi";
import type { OpNames, OpOutput } from "../../src/kind/kind";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  msOf,
  opsOn,
  ORIGIN,
  runDueAlarms,
  stubOf,
  type Problem,
  type ResourceExport,
  type ResourceRecord,
} from "../harness";

/** What vaults' op `N` answers. */
type Out<N extends OpNames<typeof vaults>> = OpOutput<typeof vaults, N>;
/** What put answers (its OpOutput is only the `{ version }` its ETag header reads; get's too, hence Entry). */
type PutResult = z.infer<typeof putResult>;

async function vault() {
  const { token } = await buyCredits(5);
  const { id, mgmt } = await createResource("vaults", token, {});
  const { reply: op } = opsOn(vaults, id, mgmt, token);
  const key = (k: string) => `/keys/${encodeURIComponent(k)}`;
  return { token, id, mgmt, op, key };
}

/** Every user table row count of the vault's object (the kind's own tables). */
async function storedKeys(id: string): Promise<string[]> {
  return runInDurableObject(stubOf(id), (_o, state) =>
    state.storage.sql
      .exec<{ key: string }>("SELECT key FROM vault_keys ORDER BY key")
      .toArray()
      .map((r) => r.key),
  );
}

describe("vaults", () => {
  it("puts, gets and deletes JSON values with metadata, ETag and keys of any characters", async () => {
    const { op, key } = await vault();
    const value = { nested: [1, "two", { three: null }], ok: true };
    const put = await op<PutResult>("PUT", key("agents/alice/profile"), { value, metadata: { kind: "profile" } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({
      key: "agents/alice/profile",
      created: true,
      metadata: { kind: "profile" },
      expires_at: null,
    });
    expect(put.headers.get("etag")).toBe(`"${put.body.version}"`);

    const got = await op("GET", key("agents/alice/profile"));
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      key: "agents/alice/profile",
      value,
      metadata: { kind: "profile" },
      version: put.body.version,
    });
    expect(got.headers.get("etag")).toBe(`"${put.body.version}"`);

    for (const odd of ["ünïcødé 🔑", "with space", "a?b#c", "%2F"]) {
      expect((await op("PUT", key(odd), { value: odd })).status).toBe(200);
      expect((await op("GET", key(odd))).body.value).toBe(odd);
    }
    // Scalars and null are values too.
    expect((await op("PUT", key("n"), { value: null })).status).toBe(200);
    expect((await op("GET", key("n"))).body.value).toBeNull();

    const again = await op("PUT", key("agents/alice/profile"), { value: 2 });
    expect(again.body.created).toBe(false);
    expect(again.body.version).toBeGreaterThan(put.body.version);
    expect(again.body.metadata).toBeNull(); // each put sets its own metadata

    const del = await op("DELETE", key("agents/alice/profile"));
    expect(del.body).toEqual({ key: "agents/alice/profile", deleted: true, version: again.body.version });
    const gone = await op("GET", key("agents/alice/profile"));
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe("not_found");
    expect((await op("DELETE", key("agents/alice/profile"))).body.deleted).toBe(false);

    const info = await op("GET", "");
    expect(info.body).toMatchObject({ keys: 5, limits: { max_keys: 100_000, max_value_bytes: 1536 * 1024 } });
  });

  it("compare-and-set: of 20 writers racing on one version exactly one wins, round after round", async () => {
    const { op, key, token } = await vault();
    const first = await op<PutResult>("PUT", key("leader"), { value: { round: 0 } });
    let version: number = first.body.version;
    for (let round = 1; round <= 5; round++) {
      const spentBefore = (await balanceOf(token)).spent_usd;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, w) =>
          op("PUT", key("leader"), { value: { round, writer: w } }, { "If-Match": `"${version}"` }),
        ),
      );
      const winners = answers.filter((a) => a.status === 200);
      const losers = answers.filter((a) => a.status === 409);
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(19);
      const won = winners[0]!.body as PutResult; // a 200: the harness checked it against put's output
      for (const l of losers) {
        expect(l.body.code).toBe("conflict");
        expect(l.body.current_version).toBe(won.version);
        expect(l.headers.get("etag")).toBe(`"${won.version}"`);
      }
      const now = await op<Entry & { value: { round: number } }>("GET", key("leader"));
      expect(now.body.version).toBe(won.version);
      expect(now.body.value.round).toBe(round);
      // Only the winner and the read were charged.
      expect((await balanceOf(token)).spent_usd).toBeCloseTo(spentBefore + 0.0002 + 0.0001, 6);
      version = won.version;
    }
  });

  it("If-None-Match: * creates once; if_version in the body does the same as the headers", async () => {
    const { op, key } = await vault();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, w) => op("PUT", key("once"), { value: w }, { "If-None-Match": "*" })),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(19);

    expect((await op("PUT", key("fresh"), { value: 1, if_version: 0 })).status).toBe(200);
    const current = (await op<Entry>("GET", key("fresh"))).body.version;
    expect((await op("PUT", key("fresh"), { value: 2, if_version: 0 })).status).toBe(409);
    expect((await op("PUT", key("fresh"), { value: 2, if_version: current + 1 })).status).toBe(409);
    expect((await op("PUT", key("fresh"), { value: 2, if_version: current })).status).toBe(200);

    expect((await op("PUT", key("absent"), { value: 1 }, { "If-Match": "*" })).status).toBe(409);
    expect((await op("PUT", key("fresh"), { value: 3 }, { "If-Match": "*" })).status).toBe(200);
    expect((await op("PUT", key("fresh"), { value: 4 }, { "If-Match": 'W/"1", "999999"' })).status).toBe(409);
    const bad = await op("PUT", key("fresh"), { value: 4 }, { "If-Match": "not an etag" });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_request");

    const v = (await op<Entry>("GET", key("fresh"))).body.version;
    expect((await op("DELETE", `${key("fresh")}?if_version=${v + 5}`)).status).toBe(409);
    expect((await op("DELETE", key("fresh"), undefined, { "If-Match": `"${v}"` })).body.deleted).toBe(true);
  });

  it("round-trips a 1 MiB value exactly and refuses one over the limit with 413, storing nothing", async () => {
    const { op, key, id } = await vault();
    // 1 MiB of UTF-8 with multi-byte characters and characters JSON escapes.
    const unit = 'aé€😀"\\\n';
    const unitBytes = new TextEncoder().encode(unit).length;
    const big = unit.repeat(Math.floor((1024 * 1024) / unitBytes)) + "x".repeat((1024 * 1024) % unitBytes);
    expect(new TextEncoder().encode(big).length).toBe(1024 * 1024);
    const put = await op("PUT", key("big"), { value: big });
    expect(put.status, JSON.stringify(put.body).slice(0, 300)).toBe(200);
    const got = await op("GET", key("big"));
    expect(got.body.value === big).toBe(true);

    const tooBig = "x".repeat(1536 * 1024); // + 2 quotes: over the limit
    const refused = await op("PUT", key("too-big"), { value: tooBig });
    expect(refused.status).toBe(413);
    expect(refused.body.code).toBe("payload_too_large");
    const huge = await op("PUT", key("huge"), { value: "x".repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413); // the body limit of the route
    expect(await storedKeys(id)).toEqual(["big"]);
  });

  it("validates keys, metadata and TTLs with 422", async () => {
    const { op, key } = await vault();
    const long = await op<Problem>("PUT", key("k".repeat(513)), { value: 1 });
    expect(long.status).toBe(422);
    expect(long.body.errors![0]!.path).toBe("key");
    const meta = await op<Problem>("PUT", key("m"), { value: 1, metadata: { blob: "x".repeat(1100) } });
    expect(meta.status).toBe(422);
    expect(meta.body.errors![0]!.path).toBe("metadata");
    expect((await op("PUT", key("m"), { value: 1, metadata: [1] })).status).toBe(422);
    expect((await op("PUT", key("m"), { value: 1, ttl_seconds: 0 })).status).toBe(422);
    const missing = await op<Problem>("PUT", key("m"), { metadata: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.errors![0]!.path).toBe("value");
  });

  it("per-key TTL: invisible once expired, purged by the alarm, counted out of usage", async () => {
    const { op, key, id, mgmt } = await vault();
    const put = await op<PutResult>("PUT", key("session"), { value: "s", ttl_seconds: 3600 });
    expect(msOf(put.body.expires_at) - Date.now()).toBeGreaterThan(3590_000);
    await op("PUT", key("keep"), { value: "k" });
    // The hour passes: the key is gone for every reader at once, whenever the alarm purges its row.
    await advance(id, 3600_000, { alarms: false });

    expect((await op("GET", key("session"))).status).toBe(404);
    expect((await op<Out<"list">>("GET", "/keys")).body.items.map((i: { key: string }) => i.key)).toEqual(["keep"]);
    const status = await json<ResourceRecord>(await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) }));
    expect(status.usage.keys).toBe(1);
    // The row goes with the alarm set for the earliest expiry (which the runtime may have run already).
    await runDueAlarms(id);
    expect(await storedKeys(id)).toEqual(["keep"]);
    expect((await op("GET", "")).body).toMatchObject({ keys: 1, next_expiry_at: null });

    // An expired key can be written anew, as a new key.
    await op("PUT", key("session"), { value: "again", ttl_seconds: 60 });
    await advance(id, 61_000, { alarms: false });
    const anew = await op("PUT", key("session"), { value: "third" }, { "If-None-Match": "*" });
    expect(anew.status).toBe(200);
    expect(anew.body).toMatchObject({ created: true, expires_at: null });
    expect((await op("GET", "")).body.keys).toBe(2);
  });

  it("lists by prefix in key order with cursor paging, values on request", async () => {
    const { op } = await vault();
    const names = [
      ...Array.from({ length: 23 }, (_, i) => `users/${String(i).padStart(2, "0")}`),
      "users",
      "users0",
      "user",
      "usersé",
      "users/😀",
      "zzz",
      "a",
    ];
    const operations = names.map((k) => ({ op: "put", key: k, value: { k }, metadata: { n: k.length } }));
    expect((await op("POST", "/batch", { operations })).status).toBe(200);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `?prefix=${encodeURIComponent("users/")}&limit=10${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await op<Out<"list">>("GET", `/keys${q}`);
      expect(page.status).toBe(200);
      for (const item of page.body.items) {
        expect(item.value).toBeUndefined();
        expect(item.metadata).toEqual({ n: item.key.length });
        seen.push(item.key);
      }
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    const expected = names
      .filter((n) => n.startsWith("users/"))
      .sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1));
    expect(seen).toEqual(expected);
    expect(pages).toBe(3);

    const all = await op<Out<"list">>("GET", "/keys?limit=1000&include_values=true");
    expect(all.body.items).toHaveLength(names.length);
    expect(all.body.items[0]).toMatchObject({ key: "a", value: { k: "a" } });
    expect(all.body.next_cursor).toBeNull();
    expect((await op("GET", "/keys?cursor=!!notacursor")).status).toBe(422);
  });

  it("batch writes apply all or none, each with its own if_version", async () => {
    const { op, key, token } = await vault();
    const a = (await op<PutResult>("PUT", key("a"), { value: 1 })).body.version;
    const b = (await op<PutResult>("PUT", key("b"), { value: 1 })).body.version;
    const spent = (await balanceOf(token)).spent_usd;

    const refused = await op("POST", "/batch", {
      operations: [
        { op: "put", key: "a", value: 2, if_version: a },
        { op: "put", key: "c", value: 2 },
        { op: "delete", key: "b", if_version: b + 100 },
      ],
    });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("operations.2");
    expect((await op("GET", key("a"))).body).toMatchObject({ value: 1, version: a });
    expect((await op("GET", key("c"))).status).toBe(404);
    expect((await op("GET", key("b"))).body.value).toBe(1);
    // The refused batch cost nothing (the two reads that found a key did; a 404 is not charged either).
    expect((await balanceOf(token)).spent_usd).toBeCloseTo(spent + 0.0002, 6);

    const tooBig = await op("POST", "/batch", {
      operations: [
        { op: "put", key: "x", value: 1 },
        { op: "put", key: "y", value: "x".repeat(1600 * 1024) },
      ],
    });
    expect(tooBig.status).toBe(413);
    expect((await op("GET", key("x"))).status).toBe(404);

    const done = await op<Out<"batch">>("POST", "/batch", {
      operations: [
        { op: "put", key: "a", value: 2, if_version: a },
        { op: "put", key: "c", value: 3, if_version: 0, ttl_seconds: 60 },
        { op: "delete", key: "b", if_version: b },
      ],
    });
    expect(done.status).toBe(200);
    expect(done.body.results.map((r: { op: string; key: string }) => `${r.op}:${r.key}`)).toEqual([
      "put:a",
      "put:c",
      "delete:b",
    ]);
    expect(done.body.results[2]).toMatchObject({ deleted: true, version: b });
    const many = await op<Out<"get_many">>("POST", "/batch/get", { keys: ["a", "b", "c"] });
    expect(many.body.items.map((i: { found: boolean }) => i.found)).toEqual([true, false, true]);
    expect(many.body.items[0]!.entry!.value).toBe(2);
  });

  it("compare-and-set works through MCP tools too, which send no headers (if_version)", async () => {
    const { id, mgmt, token, op, key } = await vault();
    const v = (await op<PutResult>("PUT", key("doc/1"), { value: "first" })).body.version;
    const tool = async (name: string, args: Record<string, unknown>) => {
      const res = await SELF.fetch(`${ORIGIN}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${token}`,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name, arguments: { id, management_token: mgmt, ...args } },
        }),
      });
      return ((await res.json()) as { result: { isError?: boolean; structuredContent: Record<string, unknown> } })
        .result;
    };
    const stale = await tool("vaults_put", { key: "doc/1", value: "lost", if_version: v + 1 });
    expect(stale.isError).toBe(true);
    expect(stale.structuredContent).toMatchObject({ code: "conflict", current_version: v });
    const won = await tool("vaults_put", { key: "doc/1", value: "second", if_version: v });
    expect(won.isError, JSON.stringify(won)).toBeUndefined();
    expect((await tool("vaults_get", { key: "doc/1" })).structuredContent).toMatchObject({
      value: "second",
      version: won.structuredContent.version,
    });
  });

  it("exports every key with its value, then cancel leaves nothing in storage", async () => {
    const { op, key, id, mgmt } = await vault();
    await op("POST", "/batch", {
      operations: Array.from({ length: 50 }, (_, i) => ({
        op: "put",
        key: `k${i}`,
        value: { i },
        metadata: { even: i % 2 === 0 },
      })),
    });
    await op("PUT", key("ttl"), { value: "t", ttl_seconds: 600 });
    const exported = await json<ResourceExport<ReturnType<typeof exportVault>>>(
      await call("GET", `/v1/resources/${id}/export`, { headers: managed(mgmt) }),
    );
    expect(exported.data.keys).toHaveLength(51);
    expect(exported.data.keys.find((k: { key: string }) => k.key === "k7")).toMatchObject({
      value: { i: 7 },
      metadata: { even: false },
    });
    expect(exported.data.keys.find((k: { key: string }) => k.key === "ttl")!.expires_at).not.toBeNull();
    expect(exported.resource.usage).toMatchObject({ keys: 51 });

    expect((await call("DELETE", `/v1/resources/${id}`, { headers: managed(mgmt) })).status).toBe(200);
    const empty = await runInDurableObject(stubOf(id), async (_o, state) => {
      const tables = state.storage.sql
        .exec(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND " +
            "name NOT LIKE 'sqlite_%'",
        )
        .toArray();
      return tables.length === 0 && (await state.storage.getAlarm()) === null;
    });
    expect(empty).toBe(true);
    expect((await op("GET", key("k1"))).status).toBe(410);
  });
});

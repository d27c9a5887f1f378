/**
 * journals, per docs/kinds.md: appends with server seq and time, expected_seq, range reads,
 * a long-poll tail, a hash chain anyone can recompute and a head signed against the JWKS.
 * The chain is recomputed here from the published rule, with this file's own canonical
 * JSON and WebCrypto's SHA-256, never with the service's code.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { journals } from "../../src/kinds/memory/journals";
import type { OpNames, OpOutput } from "../../src/kind/kind";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  opsOn,
  type Problem,
  type ResourceExport,
} from "../harness";
import { watchRowsRead } from "./rows-read";

const ZEROS = "0".repeat(64);

/** What journals' op `N` answers. */
type Out<N extends OpNames<typeof journals>> = OpOutput<typeof journals, N>;

async function journal() {
  const { token } = await buyCredits(2);
  const { id, mgmt } = await createResource("journals", token, { ttl_seconds: 86400 });
  const { reply: op } = opsOn(journals, id, mgmt, token);
  return { token, id, mgmt, op };
}

/** RFC 8785, written independently: members sorted by UTF-16 code units, ECMAScript number and string forms. */
function jcs(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

type Exported = { seq: number; time: string; type: string | null; data: unknown; hash: string };

/**
 * The chain as the OpenAPI document states it; returns the head hash, failing at the first entry that does not match.
 */
async function recomputeChain(entries: Exported[]): Promise<string> {
  let prev = ZEROS;
  for (const [i, e] of entries.entries()) {
    expect(e.seq).toBe(i + 1);
    const hash = await sha256Hex([prev, String(e.seq), e.time, e.type ?? "", jcs(e.data)].join("\n"));
    expect(hash, `entry ${e.seq}`).toBe(e.hash);
    prev = hash;
  }
  return prev;
}

const jwks = async () => createLocalJWKSet(await json<{ keys: JWK[] }>(await call("GET", "/.well-known/jwks.json")));

describe("journals", () => {
  it("appends get server seq and time; the exported chain recomputes, the signed head verifies (JWKS)", async () => {
    const j = await journal();
    const first = await j.op<Out<"append">>("POST", "/entries", {
      type: "order.placed",
      data: { z: 1, a: [1.5, "é", null], m: { y: true, b: "\u2028" } },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ seq: 1, type: "order.placed", prev_hash: ZEROS });
    expect(Date.parse(first.body.time)).toBeGreaterThan(Date.now() - 60_000);

    const batch = await j.op<Out<"append_batch">>("POST", "/entries/batch", {
      entries: [
        { data: "plain text" },
        { type: "n", data: 1e21 },
        { data: null },
        { data: { "\u00e9": 1, e: 2, "😀": 3, "\u20ac": 4 } },
        { data: [-0, 0.1, 100] },
      ],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body.items.map((e: { seq: number }) => e.seq)).toEqual([2, 3, 4, 5, 6]);
    expect(batch.body.items[0]!.prev_hash).toBe(first.body.hash);
    expect(new Set(batch.body.items.map((e: { time: string }) => e.time)).size).toBe(1);
    expect(batch.body.head_seq).toBe(6);

    const headRes = await j.op<Out<"head">>("GET", "/head");
    expect(headRes.status).toBe(200);
    const { head, jws } = headRes.body;

    const exported = await json<ResourceExport<{ entries: Exported[]; head: unknown }>>(
      await call("GET", `/v1/resources/${j.id}/export`, { headers: managed(j.mgmt) }),
    );
    const entries = exported.data.entries;
    expect(entries).toHaveLength(6);
    expect(entries[3]!.data).toBeNull();
    const headHash = await recomputeChain(entries);
    expect(exported.data.head).toMatchObject({ head_seq: 6, head_hash: headHash });

    const verified = await compactVerify(jws, await jwks());
    expect(decodeProtectedHeader(jws)).toMatchObject({ alg: "RS256", typ: "journal-head+json", kid: "test-key-1" });
    const payload = JSON.parse(new TextDecoder().decode(verified.payload));
    expect(payload).toEqual(head);
    expect(payload).toMatchObject({
      resource_id: j.id,
      seq: 6,
      hash: headHash,
      entry_time: entries[5]!.time,
      iss: "https://zeitvault.test",
    });

    // Any edit breaks the chain: a changed value no longer hashes to its stored link.
    const edited = entries.map((e) => (e.seq === 2 ? { ...e, data: "plain text!" } : e));
    await expect(recomputeChain(edited)).rejects.toThrow();
  });

  it("an empty journal's head is seq 0 over 64 zeros, signed", async () => {
    const j = await journal();
    const { body } = await j.op<Out<"head">>("GET", "/head");
    expect(body.head).toMatchObject({ seq: 0, hash: ZEROS, entry_time: null });
    await compactVerify(body.jws, await jwks());
    expect((await j.op("GET", "")).body).toMatchObject({ head_seq: 0, head_hash: ZEROS, head_time: null, bytes: 0 });
  });

  it("50 parallel appends, one expected_seq: one wins, the rest 409 naming the current seq, uncharged", async () => {
    const j = await journal();
    await j.op("POST", "/entries", { data: "genesis" });
    const spent = (await balanceOf(j.token)).spent_usd;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => j.op("POST", "/entries", { data: { writer: i }, expected_seq: 1 })),
    );
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    expect(won[0]!.body.seq).toBe(2);
    const lost = results.filter((r) => r.status === 409);
    expect(lost).toHaveLength(49);
    expect(lost[0]!.body).toMatchObject({ code: "conflict", current_seq: 2 });
    expect(lost[0]!.body.detail).toContain("last seq is 2");
    expect((await j.op("GET", "")).body.head_seq).toBe(2);
    expect((await balanceOf(j.token)).spent_usd).toBeCloseTo(spent + 0.0001 * 2, 6); // the winner and the GET
    // A batch with a stale expected_seq appends nothing.
    expect((await j.op("POST", "/entries/batch", { entries: [{ data: 1 }], expected_seq: 1 })).status).toBe(409);
    expect((await j.op("POST", "/entries/batch", { entries: [{ data: 1 }], expected_seq: 2 })).status).toBe(200);
  });

  it("reads ranges forward and backward with paging, and single entries", async () => {
    const j = await journal();
    const entries = Array.from({ length: 25 }, (_, i) => ({ type: "step", data: { i: i + 1 } }));
    expect((await j.op("POST", "/entries/batch", { entries })).status).toBe(200);

    const forward: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { status: number; body: Out<"read"> } = await j.op(
        "GET",
        `/entries?limit=10${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.status).toBe(200);
      for (const [k, e] of page.body.items.entries()) {
        forward.push(e.seq);
        expect(e.data).toEqual({ i: e.seq });
        if (k > 0) expect(e.prev_hash).toBe(page.body.items[k - 1]!.hash);
      }
      cursor = page.body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(forward).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(pages).toBe(3);

    const back = await j.op<Out<"read">>("GET", "/entries?direction=backward&limit=4");
    expect(back.body.items.map((e: { seq: number }) => e.seq)).toEqual([25, 24, 23, 22]);
    expect(back.body.next_cursor).toBe("21");
    expect(back.body.items[0]!.prev_hash).toBe(back.body.items[1]!.hash);
    const more = await j.op<Out<"read">>(
      "GET",
      `/entries?direction=backward&limit=100&cursor=${back.body.next_cursor}`,
    );
    expect(more.body.items).toHaveLength(21);
    expect(more.body.items.at(-1)).toMatchObject({ seq: 1, prev_hash: ZEROS });
    expect(more.body.next_cursor).toBeNull();

    const mid = await j.op<Out<"read">>("GET", "/entries?from_seq=10&limit=3");
    expect(mid.body.items.map((e: { seq: number }) => e.seq)).toEqual([10, 11, 12]);
    expect(mid.body.head_seq).toBe(25);
    expect((await j.op("GET", "/entries?from_seq=26")).body).toMatchObject({ items: [], next_cursor: null });

    const one = await j.op("GET", "/entries/7");
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ seq: 7, type: "step", data: { i: 7 } });
    expect(one.body.prev_hash).toBe((await j.op("GET", "/entries/6")).body.hash);
    expect((await j.op("GET", "/entries/26")).status).toBe(404);
    expect((await j.op("GET", "/entries/0")).status).toBe(422);
    expect((await j.op("GET", "/entries?limit=1001")).status).toBe(422);
  });

  it("a long-poll tail wakes when another call appends", async () => {
    const j = await journal();
    await j.op("POST", "/entries", { data: "before" });
    const started = Date.now();
    const waiting = j.op<Out<"tail">>("GET", "/tail?after_seq=1&wait_seconds=20");
    await new Promise((r) => setTimeout(r, 300));
    const appended = await j.op("POST", "/entries", { type: "wake", data: { hello: "tail" } });
    expect(appended.status).toBe(200);
    const tail = await waiting;
    expect(tail.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(tail.body.items).toHaveLength(1);
    expect(tail.body.items[0]).toMatchObject({ seq: 2, type: "wake", data: { hello: "tail" } });
    expect(tail.body).toMatchObject({ head_seq: 2, next_after_seq: 2 });

    // Something already there: no wait at all. Nothing coming: the wait ends empty.
    expect((await j.op("GET", "/tail?after_seq=0&wait_seconds=30")).body.items).toHaveLength(2);
    const idle = Date.now();
    const empty = await j.op("GET", "/tail?after_seq=2&wait_seconds=1");
    expect(empty.body).toMatchObject({ items: [], next_after_seq: 2 });
    expect(Date.now() - idle).toBeGreaterThanOrEqual(900);
    expect((await j.op("GET", "/tail?after_seq=0&wait_seconds=31")).status).toBe(422);
  });

  it("enforces its limits with 413 and 422, and charges nothing for refusals", async () => {
    const j = await journal();
    await j.op("POST", "/entries", { data: 0 });
    const spent = (await balanceOf(j.token)).spent_usd;
    const big = await j.op("POST", "/entries", { data: "x".repeat(64 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("payload_too_large");
    const tooMany = await j.op<Problem>("POST", "/entries/batch", {
      entries: Array.from({ length: 101 }, () => ({ data: 1 })),
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors![0]!.path).toBe("entries");
    const noData = await j.op<Problem>("POST", "/entries", { type: "x" });
    expect(noData.status).toBe(422);
    expect(noData.body.errors![0]!.path).toBe("data");
    const badType = await j.op<Problem>("POST", "/entries", { type: "has space", data: 1 });
    expect(badType.body.errors![0]!.path).toBe("type");
    const surrogate = await j.op<Problem>("POST", "/entries/batch", {
      entries: [{ data: 1 }, { data: { s: "\ud800" } }],
    });
    expect(surrogate.status).toBe(422);
    expect(surrogate.body.errors![0]!.path).toBe("entries.1.data");
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expect((await j.op("POST", "/entries", { data: deep })).status).toBe(422);
    expect((await balanceOf(j.token)).spent_usd).toBeCloseTo(spent, 6);
    expect((await j.op("GET", "")).body.head_seq).toBe(1);

    // Filled by real appends to 5 bytes under the cap: 95 entries at the 64 KiB entry limit and one of 65530 bytes (a
    // string's canonical JSON is its length + 2), in batches that fit the 1 MiB request body; with the first entry `0`
    // that is 6 MiB - 5.
    const entries = [
      ...Array.from({ length: 95 }, () => ({ data: "x".repeat(64 * 1024 - 2) })),
      { data: "x".repeat(65530 - 2) },
    ];
    for (let i = 0; i < entries.length; i += 15)
      expect((await j.op("POST", "/entries/batch", { entries: entries.slice(i, i + 15) })).status).toBe(200);
    expect((await j.op<{ bytes: number }>("GET", "")).body.bytes).toBe(6 * 1024 * 1024 - 5);
    const full = await j.op("POST", "/entries", { data: "123456" });
    expect(full.status).toBe(413);
    expect(full.body.detail).toContain("6291456 bytes");
    expect((await j.op("POST", "/entries", { data: 123 })).status).toBe(200);
  });

  it("stays on its primary key at 100,000 entries: append, reads, tail and head read a handful of rows", async () => {
    const j = await journal();
    const n = 99_990; // the cap is 100,000: room for the appends below
    const now = Date.now();
    // Written straight into storage (appending them would take minutes here); the chain's links are placeholders.
    await runInDurableObject(env.RESOURCES.get(env.RESOURCES.idFromName(j.id)), (_o, state) => {
      const sql = state.storage.sql;
      sql.exec(
        `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?2)
         INSERT INTO journal_entries (seq, time, type, data, hash)
         SELECT x, ?1 - ?2 + x, 'step', '{"i":' || x || '}', printf('%064x', x) FROM n`,
        now,
        n,
      );
      sql.exec(
        "UPDATE journal_state SET head_seq = ?, head_hash = ?, head_time = ?, bytes = ?",
        n,
        n.toString(16).padStart(64, "0"),
        now,
        n * 12,
      );
    });
    const rows = await watchRowsRead(j.id);
    const budget = async <T>(what: string, limit: number, work: () => Promise<{ status: number; body: T }>) => {
      let out: { status: number; body: T } | undefined;
      const read = await rows.during(async () => (out = await work()));
      expect(out!.status, `${what}: ${JSON.stringify(out!.body)}`).toBe(200);
      expect(read, `${what} read ${read} rows`).toBeLessThan(limit);
      return out!.body;
    };

    expect((await budget("append", 30, () => j.op("POST", "/entries", { data: "next", expected_seq: n }))).seq).toBe(
      n + 1,
    );
    expect(
      (await budget("batch append", 30, () => j.op("POST", "/entries/batch", { entries: [{ data: 1 }, { data: 2 }] })))
        .head_seq,
    ).toBe(n + 3);
    const mid = await budget("read 100 from the middle", 250, () =>
      j.op<Out<"read">>("GET", "/entries?from_seq=50000&limit=100"),
    );
    expect(mid.items.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => 50_000 + i));
    const newest = await budget("read backward from the head", 60, () =>
      j.op<Out<"read">>("GET", "/entries?direction=backward&limit=10"),
    );
    expect(newest.items[0]!.seq).toBe(n + 3);
    expect(newest.items[1]!.hash).toBe(newest.items[0]!.prev_hash);
    expect((await budget("tail", 30, () => j.op<Out<"tail">>("GET", `/tail?after_seq=${n}`))).items).toHaveLength(3);
    expect((await budget("entry", 20, () => j.op("GET", "/entries/12345"))).data).toEqual({ i: 12345 });
    expect((await budget("signed head", 20, () => j.op<Out<"head">>("GET", "/head"))).head.seq).toBe(n + 3);
    await budget("info", 20, () => j.op("GET", ""));
  });
});

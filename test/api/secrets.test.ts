/**
 * secrets, per docs/kinds.md: encrypted at rest, revealed once at the public URL and destroyed, optional passphrase,
 * read metadata.
 */
import { env, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { secrets } from "../../src/kinds/memory/secrets";
import { buyCredits, call, createResource, json, managed, opsOn, publicUrl, type Problem } from "../harness";

async function secret(body: Record<string, unknown>) {
  const { token } = await buyCredits(1);
  const { record, id, mgmt } = await createResource("secrets", token, body);
  const publicPath = new URL(publicUrl(record)).pathname;
  const reveal = async <T = Record<string, unknown>>(payload?: unknown, headers: Record<string, string> = {}) => {
    const res = await call("POST", publicPath, { body: payload, headers });
    return { status: res.status, body: await json<T>(res) };
  };
  const peek = async () => {
    const res = await call("GET", publicPath);
    return { status: res.status, body: await json(res) };
  };
  const { ok } = opsOn(secrets, id, mgmt, token);
  const status = () => ok("get", "");
  return { token, record, id, mgmt, publicPath, reveal, peek, status, ok };
}

async function dumpSqlite(sql: SqlStorage): Promise<string> {
  const tables = sql
    .exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
    )
    .toArray();
  return tables.map((t) => JSON.stringify(sql.exec(`SELECT * FROM "${t.name}"`).toArray())).join("\n");
}

/** Every row of D1 and of every Durable Object's SQLite, as text. */
async function dumpEverything(): Promise<string> {
  const tables = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE " +
      "'_cf_%' AND name NOT LIKE 'd1_%'",
  ).all<{ name: string }>();
  let dump = "";
  for (const { name } of tables.results)
    dump += JSON.stringify((await env.DB.prepare(`SELECT * FROM "${name}"`).all()).results);
  for (const id of await listDurableObjectIds(env.ACCOUNTS))
    dump += await runInDurableObject(env.ACCOUNTS.get(id), (_o, state) => dumpSqlite(state.storage.sql));
  for (const id of await listDurableObjectIds(env.RESOURCES))
    dump += await runInDurableObject(env.RESOURCES.get(id), (_o, state) => dumpSqlite(state.storage.sql));
  return dump;
}

describe("secrets", () => {
  it("reveals the value once, on POST; GET never uses it up; the second read finds nothing", async () => {
    const value = `the launch code is ${crypto.randomUUID()} ✓`;
    const s = await secret({ value, label: "launch" });
    expect(s.record.config).toEqual({ passphrase_required: false, max_passphrase_attempts: 5 });
    expect(JSON.stringify(s.record)).not.toContain(value);
    expect(publicUrl(s.record)).toMatch(/\/p\/secrets_[0-9A-Za-z]{43}$/);
    expect(s.record.status).toMatchObject({ state: "unread", read: false, read_at: null });

    // Link previews fetch with GET: it says what is there and consumes nothing.
    for (let i = 0; i < 2; i++) {
      const peek = await s.peek();
      expect(peek.status).toBe(200);
      expect(peek.body).toMatchObject({ state: "unread", passphrase_required: false });
      expect(JSON.stringify(peek.body)).not.toContain(value);
    }

    const before = Date.now();
    const first = await s.reveal<{ value: string; read_at: string }>();
    expect(first.status).toBe(200);
    expect(first.body.value).toBe(value);
    expect(Date.parse(first.body.read_at)).toBeGreaterThanOrEqual(before - 1000);

    const second = await s.reveal();
    expect(second.status).toBe(404);
    expect(second.body.code).toBe("not_found");
    expect((await s.peek()).status).toBe(404);

    const status = await s.status();
    expect(status).toMatchObject({ state: "read", read: true, read_at: first.body.read_at, burned_at: null });
    const record = await json(await call("GET", `/v1/resources/${s.id}`, { headers: managed(s.mgmt) }));
    expect(record.status).toMatchObject({ state: "read", read_at: first.body.read_at });
    expect(record.usage).toEqual({ reads: 1, failed_passphrase_attempts: 0 });
    expect(record.config).toEqual({ passphrase_required: false, max_passphrase_attempts: 5 });

    const exported = await json(await call("GET", `/v1/resources/${s.id}/export`, { headers: managed(s.mgmt) }));
    expect(exported.data).toEqual({ secret: status, value_exported: false });
  });

  it("of many simultaneous reveals exactly one gets the value", async () => {
    const value = `race ${crypto.randomUUID()}`;
    const s = await secret({ value, passphrase: "pass phrase" });
    const answers = await Promise.all(Array.from({ length: 10 }, () => s.reveal({ passphrase: "pass phrase" })));
    expect(answers.filter((a) => a.status === 200).map((a) => a.body.value)).toEqual([value]);
    expect(answers.filter((a) => a.status === 404)).toHaveLength(9);
  });

  it("stores no plaintext value or passphrase anywhere, before or after the reveal", async () => {
    const value = `plaintext-canary-${crypto.randomUUID()}`;
    const passphrase = `passphrase-canary-${crypto.randomUUID()}`;
    const plain = await secret({ value: `${value}-plain` });
    const locked = await secret({ value, passphrase });
    // Idempotent creates keep their answer for replay: it must not carry the value either.
    const keyed = await call("POST", "/v1/secrets", {
      body: { value: `${value}-keyed` },
      headers: { authorization: `Bearer ${plain.token}`, "Idempotency-Key": crypto.randomUUID() },
    });
    expect(keyed.status).toBe(201);
    const canaries = [value, passphrase, `${value}-plain`, `${value}-keyed`];
    const encodings = (c: string) => [c, c.slice(10, 40), btoa(c), btoa(c).slice(4, 40)];

    let dump = await dumpEverything();
    expect(dump).toContain("has_passphrase"); // the scan did read the secrets' tables
    for (const c of canaries)
      expect(JSON.stringify([plain.record, locked.record, await keyed.clone().json()])).not.toContain(c);
    for (const c of canaries) for (const e of encodings(c)) expect(dump).not.toContain(e);
    // What is kept is ciphertext, a salt and a verifier.
    const row = await runInDurableObject(env.RESOURCES.get(env.RESOURCES.idFromName(locked.id)), (_o, state) =>
      state.storage.sql.exec("SELECT * FROM secret").one(),
    );
    expect(row).toMatchObject({ has_passphrase: 1, iterations: 100_000, read_at: null });
    expect(String(row.sealed)).toMatch(/^v1\./);

    expect((await locked.reveal({ passphrase })).body.value).toBe(value);
    expect((await plain.reveal()).body.value).toBe(`${value}-plain`);
    dump = await dumpEverything();
    for (const c of canaries) for (const e of encodings(c)) expect(dump).not.toContain(e);
    const after = await runInDurableObject(env.RESOURCES.get(env.RESOURCES.idFromName(locked.id)), (_o, state) =>
      state.storage.sql.exec("SELECT * FROM secret").one(),
    );
    expect(after).toMatchObject({ sealed: null, salt: null, verifier: null });
  });

  it("checks the passphrase: missing and wrong are 403, wrong ones are counted, the right one reveals", async () => {
    const s = await secret({ value: "behind a passphrase", passphrase: "Ünïcode pass", max_passphrase_attempts: 3 });
    expect(s.record.config).toEqual({ passphrase_required: true, max_passphrase_attempts: 3 });
    expect((await s.peek()).body.passphrase_required).toBe(true);

    const missing = await s.reveal();
    expect(missing.status).toBe(403);
    expect(missing.body.code).toBe("forbidden");
    const wrong = await s.reveal({ passphrase: "guess" });
    expect(wrong.status).toBe(403);
    expect(wrong.body.attempts_left).toBe(2);
    expect(await s.status()).toMatchObject({ state: "unread", failed_passphrase_attempts: 1 });
    expect((await s.reveal("{oops", { "content-type": "application/json" })).status).toBe(400);

    // A form works as well as JSON (and NFD spelling of the same passphrase is the same passphrase).
    const right = await s.reveal(`passphrase=${encodeURIComponent("Ünïcode pass".normalize("NFD"))}`, {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(right.status).toBe(200);
    expect(right.body.value).toBe("behind a passphrase");
    expect(await s.status()).toMatchObject({ state: "read", failed_passphrase_attempts: 1 });
  });

  it("burns the secret at the last wrong passphrase: even the right one then finds nothing", async () => {
    const s = await secret({ value: "guarded", passphrase: "right", max_passphrase_attempts: 2 });
    expect((await s.reveal({ passphrase: "wrong-1" })).body.attempts_left).toBe(1);
    const last = await s.reveal({ passphrase: "wrong-2" });
    expect(last.status).toBe(403);
    expect(last.body.attempts_left).toBe(0);
    expect((await s.reveal({ passphrase: "right" })).status).toBe(404);
    const status = await s.status();
    expect(status).toMatchObject({
      state: "burned",
      read: false,
      read_at: null,
      burn_reason: "passphrase_attempts",
      failed_passphrase_attempts: 2,
    });
    expect(status.burned_at).not.toBeNull();
  });

  it("the owner can burn it early; burning again changes nothing", async () => {
    const s = await secret({ value: "never to be read" });
    const burned = await s.ok("burn", "/burn");
    expect(burned).toMatchObject({ state: "burned", burn_reason: "owner", read: false });
    expect((await s.reveal()).status).toBe(404);
    expect((await s.peek()).status).toBe(404);
    const again = await s.ok("burn", "/burn");
    expect(again.burned_at).toBe(burned.burned_at);
  });

  it("validates the value and the attempts, and refuses other methods at the address", async () => {
    const { token } = await buyCredits(1);
    const headers = { authorization: `Bearer ${token}` };
    const big = await call("POST", "/v1/secrets", { body: { value: "x".repeat(64 * 1024 + 1) }, headers });
    expect(big.status).toBe(422);
    expect((await json<Problem>(big)).errors![0]!.path).toBe("value");
    expect(
      (await call("POST", "/v1/secrets", { body: { value: "v", max_passphrase_attempts: 0 }, headers })).status,
    ).toBe(422);
    expect((await call("POST", "/v1/secrets", { body: { value: "v", passphrase: "" }, headers })).status).toBe(422);
    expect((await call("POST", "/v1/secrets", { body: { value: "x".repeat(64 * 1024) }, headers })).status).toBe(201);

    const s = await secret({ value: "v" });
    expect((await call("PUT", s.publicPath, { body: {} })).status).toBe(405);
    expect((await call("GET", `${s.publicPath}/other`)).status).toBe(404);
    expect((await s.reveal()).body.value).toBe("v"); // none of that used it up
  });
});

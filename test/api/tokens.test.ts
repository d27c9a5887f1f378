/**
 * Narrowed management tokens (docs/api.md#narrowed-management-tokens): made, used within their limits, refused outside
 * them, never widened, revoked with what was made from them.
 */
import { describe, expect, it } from "vitest";
import {
  advance,
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  managed,
  mcpTool,
  problemOf,
  storageDump,
  stubOf,
} from "../harness";

const key = (k: string) => `/keys/${encodeURIComponent(k)}`;

async function vault() {
  const { token: credit } = await buyCredits(5);
  const { id, mgmt, record } = await createResource("vaults", credit, {});
  const as = (token: string) => (method: string, path: string, body?: unknown) =>
    call(method, `/v1/vaults/${id}${path}`, { body, headers: managed(token, credit) });
  const full = as(mgmt);
  for (const k of ["agents/alice/profile", "agents/alice/notes", "agents/bob/profile"])
    expect((await full("PUT", key(k), { value: k })).status).toBe(200);
  return { credit, id, mgmt, record, as, full };
}

async function mint(id: string, token: string, body: Record<string, unknown>) {
  return call("POST", `/v1/resources/${id}/tokens`, { body, headers: managed(token) });
}

interface TokenPage {
  items: {
    token_id: string;
    label: string;
    paid_calls: number;
    max_paid_calls: number | null;
    revoked_at: string | null;
  }[];
  next_cursor: string | null;
}

type Minted = { management_token: string; token_id: string; expires_at: string; operations: string[] | null } & Record<
  string,
  unknown
>;

async function minted(id: string, token: string, body: Record<string, unknown>): Promise<Minted> {
  const res = await mint(id, token, body);
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text);
}

async function refused(res: Response, code: string, limit?: unknown) {
  const problem = await problemOf(res, 403);
  expect(problem.code).toBe(code);
  if (limit !== undefined) expect((problem as Record<string, unknown>).limit).toEqual(limit);
  return problem;
}

describe("narrowed management tokens", () => {
  it("are zvm_ tokens, shown once and kept only as digests, limited to their operations and key prefixes", async () => {
    const { id, mgmt, as } = await vault();
    const made = await minted(id, mgmt, {
      operations: ["get", "list", "get_many"],
      key_prefixes: ["agents/alice/"],
      label: "alice's reader",
    });
    expect(made.management_token).toMatch(/^zvm_[0-9A-Za-z]+$/);
    expect(made.management_token.length).toBe(mgmt.length);
    expect(made).toMatchObject({
      token_id: expect.stringMatching(/^tok_/),
      parent_token_id: null,
      label: "alice's reader",
      operations: ["get", "get_many", "list"],
      key_prefixes: ["agents/alice/"],
      paid_calls: 0,
      revoked_at: null,
    });
    expect(await storageDump(id)).not.toContain(made.management_token);

    const alice = as(made.management_token);
    expect((await json(await alice("GET", key("agents/alice/profile")))).value).toBe("agents/alice/profile");
    expect((await alice("GET", "/keys?prefix=agents%2Falice%2F")).status).toBe(200);
    expect((await alice("POST", "/batch/get", { keys: ["agents/alice/profile", "agents/alice/notes"] })).status).toBe(
      200,
    );
    // The status is open to every token of the resource.
    expect((await call("GET", `/v1/resources/${id}`, { headers: managed(made.management_token) })).status).toBe(200);

    await refused(
      await alice("PUT", key("agents/alice/profile"), { value: 1 }),
      "token_operation_not_allowed",
      "operations",
    );
    await refused(await alice("DELETE", key("agents/alice/profile")), "token_operation_not_allowed", "operations");
    await refused(await alice("GET", key("agents/bob/profile")), "token_key_not_allowed", "key_prefixes");
    await refused(await alice("GET", "/keys?prefix=agents%2F"), "token_key_not_allowed", "key_prefixes");
    await refused(await alice("GET", "/keys"), "token_key_not_allowed", "key_prefixes");
    await refused(
      await alice("POST", "/batch/get", { keys: ["agents/alice/profile", "agents/bob/profile"] }),
      "token_key_not_allowed",
      "key_prefixes",
    );
    // An operation of a keyed kind that names no key is not open to a token limited to prefixes.
    const writer = await minted(id, mgmt, { key_prefixes: ["agents/alice/"] });
    await refused(await as(writer.management_token)("GET", ""), "token_key_not_allowed");
    expect((await as(writer.management_token)("PUT", key("agents/alice/new"), { value: 1 })).status).toBe(200);
    await refused(
      await as(writer.management_token)("POST", "/batch", {
        operations: [
          { op: "put", key: "agents/alice/a", value: 1 },
          { op: "delete", key: "agents/bob/profile" },
        ],
      }),
      "token_key_not_allowed",
    );
    expect((await json(await as(mgmt)("GET", key("agents/bob/profile")))).value).toBe("agents/bob/profile");
  });

  it("refuses once expired, and once its paid calls (counted over its line) are spent, charging nothing", async () => {
    const { id, mgmt, as, credit } = await vault();
    const now = await stubOf(id).advanceClock(0);
    const brief = await minted(id, mgmt, { expires_at: new Date(now + 120_000).toISOString() });
    expect((await as(brief.management_token)("GET", key("agents/bob/profile"))).status).toBe(200);
    await advance(id, 121_000);
    await refused(await as(brief.management_token)("GET", key("agents/bob/profile")), "token_expired", "expires_at");
    await refused(await mint(id, brief.management_token, {}), "token_expired");

    const capped = await minted(id, mgmt, { max_paid_calls: 3 });
    const child = await minted(id, capped.management_token, {});
    const use = as(child.management_token);
    expect((await use("GET", key("agents/bob/profile"))).status).toBe(200);
    expect((await as(capped.management_token)("GET", key("agents/bob/profile"))).status).toBe(200);
    expect((await use("GET", key("agents/bob/profile"))).status).toBe(200);
    const before = (await balanceOf(credit)).balance_usd;
    const spent = await refused(await use("GET", key("agents/bob/profile")), "token_calls_spent", "max_paid_calls");
    expect(spent).toMatchObject({ token_id: capped.token_id, max_paid_calls: 3 });
    await refused(await as(capped.management_token)("PUT", key("x"), { value: 1 }), "token_calls_spent");
    expect((await balanceOf(credit)).balance_usd).toBe(before);
    // Free calls are not paid calls.
    expect((await call("GET", `/v1/resources/${id}`, { headers: managed(child.management_token) })).status).toBe(200);
    const list = await json<TokenPage>(await call("GET", `/v1/resources/${id}/tokens`, { headers: managed(mgmt) }));
    expect(list.items.find((t: { token_id: string }) => t.token_id === capped.token_id)).toMatchObject({
      paid_calls: 3,
      max_paid_calls: 3,
    });
  });

  it("can be narrowed again, never widened: each excess is named", async () => {
    const { id, mgmt, record } = await vault();
    const now = await stubOf(id).advanceClock(0);
    const parent = await minted(id, mgmt, {
      operations: ["get", "list"],
      expires_at: new Date(now + 3_600_000).toISOString(),
      max_paid_calls: 10,
      key_prefixes: ["agents/"],
    });
    const narrower = await minted(id, parent.management_token, {
      operations: ["get"],
      max_paid_calls: 5,
      key_prefixes: ["agents/alice/"],
    });
    expect(narrower).toMatchObject({
      parent_token_id: parent.token_id,
      operations: ["get"],
      expires_at: parent.expires_at,
      key_prefixes: ["agents/alice/"],
    });
    // What is not asked is inherited.
    expect(await minted(id, parent.management_token, {})).toMatchObject({
      operations: ["get", "list"],
      key_prefixes: ["agents/"],
      expires_at: parent.expires_at,
    });

    const widen = async (body: Record<string, unknown>, path: string) => {
      const problem = await refused(await mint(id, parent.management_token, body), "token_widening");
      expect(problem.errors?.map((e) => e.path)).toEqual([path]);
      expect(problem.detail).toContain(path);
    };
    await widen({ operations: ["get", "put"] }, "operations");
    // read-only includes info and list_deliveries, beyond get and list
    await widen({ operations: ["read-only"] }, "operations");
    await widen({ operations: ["export_resource"] }, "operations");
    await widen({ expires_at: new Date(now + 7_200_000).toISOString() }, "expires_at");
    await widen({ max_paid_calls: 11 }, "max_paid_calls");
    await widen({ key_prefixes: ["other/"] }, "key_prefixes");
    const all = await refused(
      await mint(id, parent.management_token, { operations: ["put"], key_prefixes: ["a"], max_paid_calls: 99 }),
      "token_widening",
    );
    expect(all.errors?.map((e) => e.path)).toEqual(["operations", "max_paid_calls", "key_prefixes"]);
    // A token without a list may not grant what takes a name.
    const open = await minted(id, mgmt, {});
    await refused(await mint(id, open.management_token, { operations: ["cancel_resource"] }), "token_widening");
    expect(Date.parse(parent.expires_at)).toBeLessThan(Date.parse(record.expires_at));
  });

  it("needs extend, export and cancel granted by name; read-only grants the reads only", async () => {
    const { id, mgmt, as, credit } = await vault();
    const open = await minted(id, mgmt, {});
    const reader = await minted(id, mgmt, { operations: ["read-only"] });
    // The GET operations, as their MCP tools say readOnlyHint (get_many reads, by POST: named when wanted).
    expect(reader.operations).toEqual(["get", "info", "list", "list_deliveries"]);
    for (const t of [open, reader]) {
      await refused(
        await call("GET", `/v1/resources/${id}/export`, { headers: managed(t.management_token) }),
        "token_operation_not_allowed",
        "operations",
      );
      await refused(
        await call("POST", `/v1/resources/${id}/extend`, {
          body: { ttl_seconds: 3600 },
          headers: managed(t.management_token, credit),
        }),
        "token_operation_not_allowed",
      );
      await refused(
        await call("DELETE", `/v1/resources/${id}`, { headers: managed(t.management_token) }),
        "token_operation_not_allowed",
      );
    }
    expect((await as(open.management_token)("PUT", key("k"), { value: 1 })).status).toBe(200);
    expect((await as(reader.management_token)("GET", "")).status).toBe(200);
    await refused(await as(reader.management_token)("PUT", key("k"), { value: 1 }), "token_operation_not_allowed");
    const exporter = await minted(id, mgmt, { operations: ["export_resource", "extend_resource"] });
    expect(
      (await call("GET", `/v1/resources/${id}/export`, { headers: managed(exporter.management_token) })).status,
    ).toBe(200);
    expect(
      (
        await call("POST", `/v1/resources/${id}/extend`, {
          body: { ttl_seconds: 3600 },
          headers: managed(exporter.management_token, credit),
        })
      ).status,
    ).toBe(200);
    await refused(await as(exporter.management_token)("GET", key("k")), "token_operation_not_allowed");
    const canceller = await minted(id, mgmt, { operations: ["cancel_resource"] });
    expect((await call("DELETE", `/v1/resources/${id}`, { headers: managed(canceller.management_token) })).status).toBe(
      200,
    );
  });

  it("are listed (each token sees what was made from it) and revoked with every token made from them", async () => {
    const { id, mgmt, as } = await vault();
    const a = await minted(id, mgmt, { label: "a" });
    const b = await minted(id, a.management_token, { label: "b" });
    const c = await minted(id, b.management_token, { label: "c" });
    const other = await minted(id, mgmt, { label: "other" });
    const listOf = async (token: string) =>
      (await json<TokenPage>(await call("GET", `/v1/resources/${id}/tokens`, { headers: managed(token) }))).items.map(
        (t: { label: string }) => t.label,
      );
    expect(await listOf(mgmt)).toEqual(["a", "b", "c", "other"]);
    expect(await listOf(a.management_token)).toEqual(["b", "c"]);
    expect(await listOf(c.management_token)).toEqual([]);
    const page = await json<TokenPage>(
      await call("GET", `/v1/resources/${id}/tokens?limit=2`, { headers: managed(mgmt) }),
    );
    expect(page.items.map((t: { label: string }) => t.label)).toEqual(["a", "b"]);
    const next = await json<TokenPage>(
      await call("GET", `/v1/resources/${id}/tokens?limit=2&cursor=${page.next_cursor}`, { headers: managed(mgmt) }),
    );
    expect(next.items.map((t: { label: string }) => t.label)).toEqual(["c", "other"]);
    expect(next.next_cursor).toBeNull();

    // A token revokes only itself and what was made from it.
    expect(
      (await call("DELETE", `/v1/resources/${id}/tokens/${a.token_id}`, { headers: managed(b.management_token) }))
        .status,
    ).toBe(404);
    expect(
      (await call("DELETE", `/v1/resources/${id}/tokens/${other.token_id}`, { headers: managed(a.management_token) }))
        .status,
    ).toBe(404);
    const revoked = await json(
      await call("DELETE", `/v1/resources/${id}/tokens/${a.token_id}`, { headers: managed(mgmt) }),
    );
    expect(revoked).toEqual({ token_id: a.token_id, revoked: [a.token_id, b.token_id, c.token_id] });
    for (const t of [a, b, c]) {
      await refused(await as(t.management_token)("GET", key("agents/bob/profile")), "token_revoked", "revoked");
      await refused(await mint(id, t.management_token, {}), "token_revoked");
    }
    expect((await as(other.management_token)("GET", key("agents/bob/profile"))).status).toBe(200);
    const listed = await json<TokenPage>(await call("GET", `/v1/resources/${id}/tokens`, { headers: managed(mgmt) }));
    expect(listed.items.filter((t: { revoked_at: string | null }) => t.revoked_at).length).toBe(3);
    // A token of another resource is refused as before.
    const { id: otherId } = await createResource("vaults", (await buyCredits(1)).token, {});
    expect((await mint(otherId, other.management_token, {})).status).toBe(403);
  });

  it("refuses bad input with 422 problem+json", async () => {
    const { id, mgmt, credit } = await vault();
    const now = await stubOf(id).advanceClock(0);
    const bad = async (body: unknown, path: string) => {
      const res = await call("POST", `/v1/resources/${id}/tokens`, { body, headers: managed(mgmt) });
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const problem = await problemOf(res, 422);
      expect(
        problem.errors?.map((e) => e.path),
        JSON.stringify(problem),
      ).toContain(path);
    };
    await bad({ operations: ["get", "launch_rockets"] }, "operations.1");
    await bad({ operations: [] }, "operations");
    await bad({ operations: ["GET /keys"] }, "operations.0");
    await bad({ expires_at: "1970-01-01T00:00:00Z" }, "expires_at");
    await bad({ expires_at: "1969-07-20T20:17:00Z" }, "expires_at");
    await bad({ expires_at: new Date(now - 1000).toISOString() }, "expires_at");
    await bad({ expires_at: new Date(now + 400 * 86_400_000).toISOString() }, "expires_at");
    await bad({ expires_at: "tomorrow" }, "expires_at");
    await bad({ max_paid_calls: -1 }, "max_paid_calls");
    await bad({ max_paid_calls: 0 }, "max_paid_calls");
    await bad({ max_paid_calls: 1e12 }, "max_paid_calls");
    await bad({ max_paid_calls: 1.5 }, "max_paid_calls");
    await bad({ key_prefixes: [] }, "key_prefixes");
    await bad({ key_prefixes: ["ok/", "bad\u0001"] }, "key_prefixes.1");
    await bad({ key_prefixes: ["line\nbreak"] }, "key_prefixes.0");
    await bad({ scopes: ["all"] }, "scopes");
    // Kinds without key-like names: a counter, an object (one per resource) and a journal (one stream per resource).
    for (const kind of ["counters", "objects", "journals"]) {
      const unkeyed = await createResource(kind, credit, {});
      const problem = await problemOf(
        await call("POST", `/v1/resources/${unkeyed.id}/tokens`, {
          body: { key_prefixes: ["a/"] },
          headers: managed(unkeyed.mgmt),
        }),
        422,
      );
      expect(problem.errors?.[0]).toMatchObject({ path: "key_prefixes", message: `a ${kind} resource has no keys` });
    }
    expect(
      (await call("POST", `/v1/resources/${id}/tokens`, { body: "{not json", headers: managed(mgmt) })).status,
    ).toBe(400);
    expect((await call("POST", `/v1/resources/${id}/tokens`, { body: {}, headers: managed(credit) })).status).toBe(401);
    expect((await call("DELETE", `/v1/resources/${id}/tokens/tok_nope`, { headers: managed(mgmt) })).status).toBe(422);
  });

  it("are reached over MCP as tools", async () => {
    const { id, mgmt, credit } = await vault();
    const made = await mcpTool(credit, "narrow_token", {
      id,
      management_token: mgmt,
      operations: ["get"],
      key_prefixes: ["agents/alice/"],
    });
    expect(made.isError, JSON.stringify(made)).toBeFalsy();
    const token = made.structuredContent.management_token as string;
    expect(token).toMatch(/^zvm_/);
    const got = await mcpTool(credit, "vaults_get", { id, management_token: token, key: "agents/alice/profile" });
    expect(got.structuredContent).toMatchObject({ value: "agents/alice/profile" });
    const refusedCall = await mcpTool(credit, "vaults_get", { id, management_token: token, key: "agents/bob/profile" });
    expect(refusedCall.isError).toBe(true);
    expect(refusedCall.structuredContent).toMatchObject({ code: "token_key_not_allowed" });
    const listed = await mcpTool(credit, "list_tokens", { id, management_token: mgmt });
    expect(listed.structuredContent.items).toHaveLength(1);
    const revoked = await mcpTool(credit, "revoke_token", {
      id,
      management_token: mgmt,
      token_id: made.structuredContent.token_id,
    });
    expect(revoked.structuredContent.revoked).toEqual([made.structuredContent.token_id]);
  });
});

describe("narrowed management tokens on checkpoints", () => {
  it("take threads as keys: a token for one thread's prefix saves and reads only there", async () => {
    const { token: credit } = await buyCredits(2);
    const { id, mgmt } = await createResource("checkpoints", credit, {});
    const made = await minted(id, mgmt, { key_prefixes: ["run-a"] });
    const as = (token: string) => (method: string, path: string, body?: unknown) =>
      call(method, `/v1/checkpoints/${id}${path}`, { body, headers: managed(token, credit) });
    const sub = as(made.management_token);
    expect((await sub("POST", "/checkpoints", { thread: "run-a1", value: { step: 1 } })).status).toBe(200);
    expect((await sub("GET", "/latest?thread=run-a1")).status).toBe(200);
    expect((await as(mgmt)("POST", "/checkpoints", { thread: "run-b", value: { step: 1 } })).status).toBe(200);
    await refused(await sub("GET", "/latest?thread=run-b"), "token_key_not_allowed");
    await refused(await sub("GET", "/latest"), "token_key_not_allowed"); // the default thread, "main"
    await refused(await sub("POST", "/checkpoints", { thread: "run-b", value: 2 }), "token_key_not_allowed");
    await refused(await sub("DELETE", "/threads/run-b"), "token_key_not_allowed");
    await refused(await sub("GET", "/threads"), "token_key_not_allowed");
  });
});

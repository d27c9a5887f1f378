/**
 * approvals, per issue 14 and docs/kinds.md: a request with its Markdown description rendered safely,
 * approvers' own links sent to them (signed event), the first decision winning even under
 * parallel clicks (everyone after gets 409 and changes nothing), the decision record a JWS that
 * verifies against the JWKS and carries the hash of what was asked, the agent long-polling or
 * hearing at callback_url, and the timeout with default_on_expiry. The page in a real browser:
 * test/node/pages.test.ts.
 */
import { env } from "cloudflare:test";
import { compactVerify, createLocalJWKSet, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { approvals } from "../../src/kinds/address/approvals";
import { advance, buyCredits, call, createResource, json, opsOn, publicUrl, received, verifierOf } from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);
const browser = { accept: "text/html" };
const form = (fields: Record<string, string>) => ({
  body: new URLSearchParams(fields).toString(),
  headers: { ...browser, "content-type": "application/x-www-form-urlencoded" },
});

async function jwks() {
  return createLocalJWKSet(await json<{ keys: JWK[] }>(await call("GET", "/.well-known/jwks.json")));
}

async function approval(extra: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("approvals", token, {
    title: "Deploy v2.3?",
    description:
      "**3 migrations**. <script>alert(1)</script> [notes](javascript:alert(2)) [docs](https://example.com/docs)",
    timeout_seconds: 3600,
    ...extra,
  });
  return {
    ...created,
    token,
    address: new URL(publicUrl(created.record)).pathname,
    ...opsOn(approvals, created.id, created.mgmt, token),
  };
}

describe("approvals", () => {
  it("sends each approver their link, renders the request safely, takes the first decision, and signs it", async () => {
    const [ask, done] = [unique(), unique()];
    const a = await approval({
      approvers: [{ name: "alice", url: `${receiver}/ok/${ask}` }],
      callback_url: `${receiver}/ok/${done}`,
      comment: "required",
    });
    const pending = await a.ok("get", "");
    expect(pending).toMatchObject({ state: "pending", outcome: null, decision: null, jws: null });
    const alice = pending.links.find((l) => l.approver === "alice")!.url;
    expect(alice).toMatch(/\/a\/ak_[0-9A-Za-z]+$/);
    const [requested] = await received(ask, 1);
    expect(verifierOf(a.record).verify(requested!.body, requested!.headers)).toMatchObject({
      type: "approvals.requested",
      data: { approver: "alice", link: alice },
    });

    const page = await call("GET", new URL(alice).pathname, { headers: browser });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<strong>3 migrations</strong>");
    expect(html).toContain("&#60;script&#62;alert(1)&#60;/script&#62;");
    expect(html).not.toContain("javascript:");
    expect(html).toContain('<a href="https://example.com/docs" rel="noopener noreferrer nofollow">docs</a>');
    expect(html).toContain("Asked of alice");

    const noComment = await call("POST", new URL(alice).pathname, form({ option: "approve" }));
    expect(noComment.status).toBe(422);
    expect(await noComment.text()).toContain("A comment is required");
    expect((await call("POST", `${a.address}/a/ak_unknown`, form({ option: "approve", comment: "x" }))).status).toBe(
      404,
    );

    const decided = await call("POST", new URL(alice).pathname, form({ option: "approve", comment: "Ship it <now>" }));
    expect(decided.status).toBe(200);
    expect(await decided.text()).toContain("Decided: Approve by alice");
    const again = await call("POST", a.address, form({ option: "deny", comment: "No" }));
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("Already decided: Approve by alice");
    const scripted = await call("POST", a.address, {
      body: { option: "deny", comment: "No" },
      headers: { accept: "application/json" },
    });
    expect(scripted.status).toBe(409);
    expect(scripted.headers.get("content-type")).toContain("application/problem+json");

    const result = await a.ok("get", "");
    expect(result).toMatchObject({
      state: "approved",
      outcome: "approved",
      decision: {
        option: "approve",
        comment: "Ship it <now>",
        decided_by: "alice",
        approval_id: a.id,
        request_sha256: pending.request_sha256,
      },
    });
    const verified = await compactVerify(result.jws!, await jwks());
    expect(verified.protectedHeader.typ).toBe("approval-decision+jws");
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toEqual(result.decision);

    const [callback] = await received(done, 1);
    expect(verifierOf(a.record).verify(callback!.body, callback!.headers)).toMatchObject({
      type: "approvals.decided",
      data: { jws: result.jws },
    });
  });

  it("lets exactly one of many parallel clicks win", async () => {
    const a = await approval();
    const clicks = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call("POST", a.address, {
          body: { option: i % 2 ? "deny" : "approve", comment: `click ${i}` },
          headers: { accept: "application/json" },
        }),
      ),
    );
    const statuses = clicks.map((c) => c.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(11);
    const winner = (await clicks[statuses.indexOf(200)]!.json()) as { decision: { comment: string; option: string } };
    const result = await a.ok("get", "");
    expect(result.decision).toMatchObject({
      comment: winner.decision.comment,
      option: winner.decision.option,
      decided_by: "owner-link",
    });
  });

  it("answers a long-poll when the decision comes", async () => {
    const a = await approval();
    const waiting = a.ok("get", "?wait_seconds=10");
    await new Promise((r) => setTimeout(r, 300));
    expect(
      (await call("POST", a.address, { body: { option: "deny" }, headers: { accept: "application/json" } })).status,
    ).toBe(200);
    expect(await waiting).toMatchObject({
      state: "denied",
      outcome: "denied",
      decision: { option: "deny", comment: null },
    });
  });

  it("expires at its timeout, taking default_on_expiry's outcome, with a signed record", async () => {
    const a = await approval({ default_on_expiry: "deny" });
    await advance(a.id, 3600_000 + 1000);
    const result = await a.ok("get", "");
    expect(result).toMatchObject({
      state: "expired",
      outcome: "denied",
      decision: { option: "deny", decided_by: "timeout", state: "expired" },
    });
    await compactVerify(result.jws!, await jwks());
    const late = await call("POST", a.address, form({ option: "approve" }));
    expect(late.status).toBe(409);
    expect(await late.text()).toContain("Expired without a decision");
  });

  it("refuses what it cannot ask or take", async () => {
    const a = await approval();
    expect(
      (await call("POST", a.address, { body: { option: "maybe" }, headers: { accept: "application/json" } })).status,
    ).toBe(422);
    expect(
      (await call("POST", a.address, { body: "{nope", headers: { "content-type": "application/json" } })).status,
    ).toBe(400);
    expect(
      (
        await call("POST", a.address, {
          body: { option: "approve", comment: "a\u0000b" },
          headers: { accept: "application/json" },
        })
      ).status,
    ).toBe(422);
    expect((await a.ok("get", "")).state).toBe("pending");

    const { token } = await buyCredits(1);
    const refused = async (body: Record<string, unknown>, path: RegExp) => {
      const res = await call("POST", "/v1/approvals", {
        body: { title: "T", ...body },
        headers: { authorization: `Bearer ${token}` },
      });
      const problem = (await res.json()) as { errors?: { path: string }[] };
      expect(res.status, JSON.stringify(problem)).toBe(422);
      expect((problem.errors ?? []).map((e) => e.path).join(" ")).toMatch(path);
    };
    await refused({ default_on_expiry: "maybe" }, /default_on_expiry/);
    await refused({ timeout_seconds: 30 * 86400, ttl_seconds: 86400 }, /timeout_seconds/);
    await refused({ approvers: [{ name: "bob" }] }, /approvers/);
    await refused({ approvers: [{ name: "bob", notify: "zvm_forged" }] }, /approvers/);
    await refused(
      {
        options: [
          { id: "a", label: "A", outcome: "approved" },
          { id: "a", label: "B", outcome: "denied" },
        ],
      },
      /options/,
    );
    await refused({ title: "two\nlines" }, /title/);
  });
});

/**
 * notify's channels, per issue 14: each channel's URL, sent the same message, makes exactly the
 * request its provider's documentation specifies (method, path, query, the headers that carry
 * auth, the body), checked at a local receiver standing in for the provider. Every channel in
 * the registry has a case (channel-cases.ts); the table in docs/channels.md is the same list.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { notify } from "../../../src/kinds/address/notify";
import { CHANNELS } from "../../../src/kinds/address/notify/channels/registry";
import { buyCredits, createResource, opsOn, type Received } from "../../harness";
import { CASES, MESSAGE, type Expected } from "./channel-cases";

const PER_RESOURCE = 50;
let log: Received[] = [];

function matches(r: Received, e: Expected): boolean {
  return (
    r.path === `/provider/notify${e.path}` && (!e.find || `${JSON.stringify(r.headers)}\n${r.body}`.includes(e.find))
  );
}

/** `actual` has every member of `expected` (objects compared member by member, arrays and scalars whole). */
function expectSubset(actual: unknown, expected: unknown, at: string): void {
  if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
    expect(actual, at).toBeTypeOf("object");
    for (const [k, v] of Object.entries(expected))
      expectSubset((actual as Record<string, unknown>)[k], v, `${at}.${k}`);
  } else expect(actual, at).toEqual(expected);
}

beforeAll(async () => {
  const { token } = await buyCredits(5);
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < CASES.length; i += PER_RESOURCE) {
    const chunk = CASES.slice(i, i + PER_RESOURCE);
    const created = await createResource("notify", token, { channels: chunk.map((c) => c.url) });
    const ops = opsOn(notify, created.id, created.mgmt, token);
    sends.push(
      ops.ok("send", "/sends", MESSAGE).then(async ({ send_id }) => {
        for (let n = 0; n < 10; n++) {
          const got = await ops.ok("get_send", `/sends/${send_id}?wait_seconds=10`);
          if (got.summary.pending === 0) return got;
        }
        throw new Error("the send never settled");
      }),
    );
  }
  await Promise.all(sends);
  log = (await (await fetch(`${env.TEST_RECEIVER_URL}/_log/notify`)).json()) as Received[];
}, 180_000);

describe("notify channels", () => {
  it("has a case for every channel in the registry, and at least 100 channels", () => {
    const tested = new Set(CASES.map((c) => c.url.split("://")[0]));
    // mailto:// speaks SMTP, not HTTP: notify.test.ts sends through it to a real local SMTP server.
    expect(
      CHANNELS.filter((c) => !c.schemes.some((s) => tested.has(s) || s === "mailto")).map((c) => c.service),
    ).toEqual([]);
    expect(CHANNELS.length).toBeGreaterThanOrEqual(100);
  });

  it.each(CASES.map((c) => [c.name, c] as const))("%s: the request its API expects", (_name, c) => {
    for (const e of [c.expect].flat()) {
      const found = log.filter((r) => matches(r, e));
      expect(
        found.length,
        `one request to ${e.path}${e.find ? ` with ${e.find}` : ""} (paths seen: ${log
          .map((r) => r.path)
          .filter((p) => p.includes(e.path.split("/")[1]!))
          .join(", ")})`,
      ).toBe(1);
      const r = found[0]!;
      expect(r.method).toBe(e.method ?? "POST");
      for (const [name, value] of Object.entries(e.headers ?? {})) {
        if (value instanceof RegExp) expect(r.headers[name], name).toMatch(value);
        else expect(r.headers[name], name).toBe(value);
      }
      if (e.json !== undefined) expectSubset(JSON.parse(r.body), e.json, "body");
      if (e.form) expectSubset(Object.fromEntries(new URLSearchParams(r.body)), e.form, "form");
      if (e.text instanceof RegExp) expect(r.body).toMatch(e.text);
      else if (e.text !== undefined) expect(r.body).toBe(e.text);
    }
  });
});

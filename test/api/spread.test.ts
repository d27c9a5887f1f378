/** spread, per docs/kinds.md: members by key fire once per period at a stable hashed offset; slots listed; preview. */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { spread } from "../../src/kinds/time/spread";
import { advanceTo, buyCredits, call, createResource, managed, opsOn, received, verifierOf } from "../harness";

const receiver = env.TEST_RECEIVER_URL;

it("gives each key a stable slot, spreads keys over the period, and fires each once per period", async () => {
  const name = crypto.randomUUID().slice(0, 8);
  const { token } = await buyCredits(1);
  const s = await createResource("spread", token, { url: `${receiver}/ok/${name}`, period_seconds: 3600 });
  const { ok: op } = opsOn(spread, s.id, s.mgmt, token);

  const keys = Array.from({ length: 20 }, (_, i) => `worker-${i}`);
  const added = [];
  for (const key of keys) added.push(await op("add_member", "/members", { key }));
  const again = await op("add_member", "/members", { key: "worker-3", body: { custom: true } });
  expect(again.offset_seconds).toBe(added[3]!.offset_seconds); // the same key keeps its slot
  for (const m of added) {
    expect(m.offset_seconds).toBeGreaterThanOrEqual(0);
    expect(m.offset_seconds).toBeLessThan(3600);
    expect(Date.parse(m.next_fire_at) % 3_600_000).toBe(m.offset_seconds * 1000);
  }
  // Spread, not bunched: 20 keys fall into at least 8 of the period's 12 five-minute windows.
  expect(new Set(added.map((m) => Math.floor(m.offset_seconds / 300))).size).toBeGreaterThanOrEqual(8);

  const { fires } = await op("next", "/next?count=5");
  expect(fires).toHaveLength(5);
  expect(fires.map((f: { at: string }) => f.at)).toEqual([...fires.map((f: { at: string }) => f.at)].sort());

  // The clock reaches the second firing: those two members fire, each once, and move a whole period on.
  const [first, second] = fires;
  await advanceTo(s.id, second!.at);
  const hits = await received(name, 2);
  const bodies = hits.map((h) => verifierOf(s.record).verify(h.body, h.headers));
  const bodyOf = (key: string) => (key === "worker-3" ? { custom: true } : { key });
  expect(bodies).toEqual(expect.arrayContaining([bodyOf(first!.key), bodyOf(second!.key)]));
  const members = (await op("members", "/members?limit=100")).items;
  expect(
    members
      .filter((m) => m.fired > 0)
      .map((m) => m.key)
      .sort(),
  ).toEqual([first!.key, second!.key].sort());
  for (const m of members) expect(Date.parse(m.next_fire_at)).toBeGreaterThan(Date.parse(second!.at));

  expect((await op("remove_member", "/members/remove", { key: "worker-7" })).key).toBe("worker-7");
  expect(
    (
      await call("POST", `/v1/spread/${s.id}/members/remove`, {
        body: { key: "worker-7" },
        headers: managed(s.mgmt, token),
      })
    ).status,
  ).toBe(404);
});

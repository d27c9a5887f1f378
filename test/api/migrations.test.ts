/**
 * Schema migrations inside a resource's Durable Object: a resource made at version N keeps
 * working, with its data, once code adding migration N+1 lands (here: appended to the
 * counters kind in this isolate, then the object restarted as after a deploy).
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { findKind } from "../../src/resources/registry";
import { tableLists } from "../../durable-objects/resource/migrations";
import type { Migration } from "../../src/kind/kind";
import { buyCredits, call, createResource, json, managed, stubOf, type DeliveryPage } from "../harness";

const counters = findKind("counters")!;
const platform = tableLists(counters).platform!.length;
const landed: Migration = {
  sql: ["ALTER TABLE counter ADD COLUMN note TEXT NOT NULL DEFAULT 'added by migration 2'"],
  config: (config) => ({ ...config, note_field: true }),
};

afterEach(() => {
  const at = counters.migrations.indexOf(landed);
  if (at >= 0) counters.migrations.splice(at, 1);
});

async function versions(id: string): Promise<Record<string, number>> {
  return runInDurableObject(stubOf(id), (_obj, state) =>
    Object.fromEntries(
      state.storage.sql
        .exec<{ owner: string; version: number }>("SELECT owner, version FROM schema_versions")
        .toArray()
        .map((r) => [r.owner, r.version]),
    ),
  );
}

describe("migrations", () => {
  it("a new resource records the version of every table list", async () => {
    const { token } = await buyCredits(1);
    const { id } = await createResource("counters", token);
    expect(await versions(id)).toEqual({ platform, counters: counters.migrations.length });
  });

  it("runs a migration that landed after the resource was made, once, keeping its data and config", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token, { max: 100 });
    const inc = (by: number) =>
      call("POST", `/v1/counters/${id}/increment`, { body: { by }, headers: managed(mgmt, token) });
    expect((await json(await inc(7))).value).toBe(7);

    counters.migrations.push(landed);
    await evictDurableObject(stubOf(id)); // the next request meets the new code, as after a deploy
    const after = await json(await inc(1));
    expect(after).toMatchObject({ value: 8, max: 100 });
    expect(await versions(id)).toEqual({ platform, counters: 2 });
    const record = await json(await call("GET", `/v1/resources/${id}`, { headers: managed(mgmt) }));
    expect(record.config).toMatchObject({ max: 100, note_field: true });
    const note = await runInDurableObject(
      stubOf(id),
      (_obj, state) => state.storage.sql.exec<{ note: string }>("SELECT note FROM counter").one().note,
    );
    expect(note).toBe("added by migration 2");

    // Once: another restart runs nothing again (the column would already exist, and ALTER would fail).
    await evictDurableObject(stubOf(id));
    expect((await json(await inc(1))).value).toBe(9);
  });

  it("takes a resource made before versions were kept to be at version 1 of each list", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token);
    // Such an object has its tables as the first migrations make them, and no versions table: undo
    // what the platform's later migrations added, and leave a delivery queued the old way.
    await runInDurableObject(stubOf(id), (_obj, state) => {
      const sql = state.storage.sql;
      sql.exec("DROP TABLE schema_versions");
      sql.exec("DROP TABLE r2_drops");
      sql.exec("DROP INDEX deliveries_due");
      sql.exec("DROP INDEX deliveries_body");
      for (const column of [
        "body_key",
        "sends",
        "refusals",
        "queued",
        "due_at",
        "settled_at",
        "retry_delays",
        "queued_by",
      ])
        sql.exec(`ALTER TABLE deliveries DROP COLUMN ${column}`);
      sql.exec("ALTER TABLE resource_meta DROP COLUMN public_disabled");
      sql.exec(
        "INSERT INTO deliveries (delivery_id, event_type, url, method, headers, body, status, created_at, " +
          "updated_at) VALUES (?, 'resource.expiring', 'https://example.com/', 'POST', '{}', '{}', " +
          "'pending', ?, ?)",
        `evt_${"1".repeat(32)}`,
        Date.now(),
        Date.now(),
      );
    });
    counters.migrations.push(landed);
    await evictDurableObject(stubOf(id));
    const res = await call("POST", `/v1/counters/${id}/increment`, { body: { by: 2 }, headers: managed(mgmt, token) });
    expect(res.status).toBe(200);
    expect(await versions(id)).toEqual({ platform, counters: 2 });
    // The old row joined the outbox as a delivery already on the queue, to be sent again if nothing is heard of it.
    const [row] = (
      await json<DeliveryPage>(await call("GET", `/v1/counters/${id}/deliveries`, { headers: managed(mgmt) }))
    ).items;
    expect(row).toMatchObject({ status: "pending", sends: 1, settled_at: null });
  });
});

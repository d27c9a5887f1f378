/** vaults at their limits: 100,000 keys and 8 MiB, and an export of all of it within what one RPC carries. */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { vaults } from "../../src/kinds/memory/vaults";
import type { exportVault } from "../../src/kinds/memory/vaults/listing";
import type { OpOutput } from "../../src/kind/kind";
import { buyCredits, call, createResource, json, managed, opsOn, stubOf, type ResourceExport } from "../harness";

async function vault() {
  const { token } = await buyCredits(5);
  const { id, mgmt } = await createResource("vaults", token, {});
  const { reply: op } = opsOn(vaults, id, mgmt, token);
  return { id, mgmt, op };
}

describe("vaults at their limits", () => {
  it("exports a vault filled to both limits in one answer, even in the costliest characters", async () => {
    const { op, id, mgmt } = await vault();
    // Filled directly (100,000 keys through the API would take long). Every string holds a character beyond
    // Latin-1, which doubles its size across RPC: the worst case for the export's 32 MiB.
    await runInDurableObject(stubOf(id), (_o, state) => {
      const sql = state.storage.sql;
      const utf8 = (s: string) => new TextEncoder().encode(s).length;
      const insert = (k: string, v: string, version: number) =>
        sql.exec(
          "INSERT INTO vault_keys (key, version, bytes, metadata, updated_at, expires_at, value) VALUES " +
            "(?, ?, ?, NULL, ?, NULL, ?)",
          k,
          version,
          utf8(k) + utf8(v),
          Date.now(),
          v,
        );
      let bytes = 0;
      let n = 0;
      for (; n < 99_995; n++) {
        const k = `ключ/${String(n).padStart(6, "0")}`;
        const v = JSON.stringify(`😀${n}`);
        insert(k, v, n + 1);
        bytes += utf8(k) + utf8(v);
      }
      const big = JSON.stringify("😀" + "v".repeat(1536 * 1024 - 8));
      while (bytes + utf8(big) + 8 <= 8 * 1024 * 1024) {
        insert(`big/${n}`, big, ++n);
        bytes += utf8(`big/${n - 1}`) + utf8(big);
      }
      const keys = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM vault_keys").one().n;
      sql.exec("UPDATE vault_state SET seq = ?, keys = ?, bytes = ?", n, keys, bytes);
    });
    const info = await op<OpOutput<typeof vaults, "info">>("GET", "");
    expect(info.body.keys).toBeGreaterThan(99_995);
    expect(info.body.bytes).toBeGreaterThan(8 * 1024 * 1024 - 1536 * 1024);
    const res = await call("GET", `/v1/resources/${id}/export`, { headers: managed(mgmt) });
    expect(res.status).toBe(200);
    const exported = await json<ResourceExport<ReturnType<typeof exportVault>>>(res);
    expect(exported.data.keys).toHaveLength(info.body.keys);
    // Full: one more big value is refused.
    const full = await op("PUT", `/keys/one-more`, { value: "x".repeat(1536 * 1024 - 10) });
    expect(full.status).toBe(413);
    expect(full.body.detail).toContain("bytes");
    // With room for bytes again, the key limit holds: up to 100,000 keys and not one more.
    const bigKey = exported.data.keys.find((k: { key: string }) => k.key.startsWith("big/"))!.key;
    expect((await op("DELETE", `/keys/${encodeURIComponent(bigKey)}`)).body.deleted).toBe(true);
    const room = 100_000 - (info.body.keys - 1);
    const puts = (n: number) => Array.from({ length: n }, (_, i) => ({ op: "put", key: `extra/${i}`, value: i }));
    const over = await op("POST", "/batch", { operations: puts(room + 1) });
    expect(over.status).toBe(413);
    expect(over.body.detail).toContain("100000 keys");
    expect((await op("POST", "/batch", { operations: puts(room) })).status).toBe(200);
    expect((await op("GET", "")).body.keys).toBe(100_000);
  });
});

/**
 * Readiness compares D1's last applied migration with src/operator/schema-version.ts: it must name the last file in
 * migrations/.
 */
import { readdir, readFile } from "node:fs/promises";
import { expect, it } from "vitest";

it("LATEST_MIGRATION names the newest migration", async () => {
  const newest = (await readdir("migrations"))
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .at(-1);
  const source = await readFile("src/operator/schema-version.ts", "utf8");
  expect(source).toContain(`LATEST_MIGRATION = "${newest}"`);
});

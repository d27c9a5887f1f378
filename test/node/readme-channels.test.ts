/**
 * The README's notify channel table is the registry's: one row per channel, as GET
 * /v1/notify/channels lists them. `npm run docs:channels` rewrites it after a change.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { expect, it } from "vitest";
import { channelTableMarkdown } from "../../src/kinds/address/notify/channel-table";

const START = "<!-- notify-channels:start -->";
const END = "<!-- notify-channels:end -->";

it("lists every notify channel, as the registry does", () => {
  const readme = readFileSync("README.md", "utf8");
  const [before, rest] = readme.split(START);
  expect(rest, "the README marks where the channel table goes").toBeDefined();
  const after = rest!.split(END)[1]!;
  const expected = `${before}${START}\n${channelTableMarkdown()}\n${END}${after}`;
  if (process.env.WRITE_README === "1") writeFileSync("README.md", expected);
  else expect(readme, "the README's channel table is out of date: npm run docs:channels").toBe(expected);
});

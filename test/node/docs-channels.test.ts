/**
 * docs/channels.md's notify channel table is the registry's: one row per channel, as GET
 * /v1/notify/channels lists them, between the file's markers (the prose around them is written by
 * hand). `npm run docs:channels` rewrites the table after a change.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { expect, it } from "vitest";
import { channelTableMarkdown } from "../../src/kinds/address/notify/channel-table";

const FILE = "docs/channels.md";
const START = "<!-- notify-channels:start -->";
const END = "<!-- notify-channels:end -->";

it("lists every notify channel, as the registry does", () => {
  const text = readFileSync(FILE, "utf8");
  const [before, rest] = text.split(START);
  expect(rest, `${FILE} marks where the channel table goes`).toBeDefined();
  const after = rest!.split(END)[1]!;
  const expected = `${before}${START}\n${channelTableMarkdown()}\n${END}${after}`;
  if (process.env.WRITE_DOCS === "1") writeFileSync(FILE, expected);
  else expect(text, `${FILE}'s channel table is out of date: npm run docs:channels`).toBe(expected);
});

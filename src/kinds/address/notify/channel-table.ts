/** The channel list as docs/channels.md shows it (test/node/docs-channels.test.ts keeps the two the same). */
import { CHANNELS } from "./channels/registry";

const cell = (s: string) => s.replace(/\|/g, "\\|");

export function channelTableMarkdown(): string {
  const rows = CHANNELS.map((c) => {
    const s = c.supports;
    const carries =
      [s.title && "title", s.format !== "text" && s.format, s.attach && "attachment", s.priority && "priority"]
        .filter(Boolean)
        .join(", ") || "text";
    return `| ${c.service} | ${c.category} | \`${cell(c.grammar)}\` | ${carries} |`;
  });
  return ["| service | kind | URL | carries |", "|---|---|---|---|", ...rows].join("\n");
}

/**
 * A message as Slack's `mrkdwn` text, which is not Markdown: `*bold*`, `_italic_`, `~strike~`,
 * `<url|text>` links, and `&`, `<` and `>` as control characters that text must carry as `&amp;`,
 * `&lt;` and `&gt;` (Slack's formatting reference). Markdown is converted as Apprise converts it for
 * Slack (`**bold**` → `*bold*`, `[text](url)` → `<url|text>`), walking marked's tokens rather than
 * rewriting the source with patterns, so code, escapes and nesting come out right; plain text and
 * HTML (reduced to text) are only escaped. The `<`, `>` and `|` of the links made here stay raw.
 */
import { marked, type Token, type Tokens } from "marked";
import { decodeEntities, htmlToText, type NotifyMessage } from "./message";

/** Text as Slack shows it literally: its three control characters as entities, nothing else. */
export const slackEscape = (text: string): string =>
  text.replace(/[&<>]/g, (ch) => (ch === "&" ? "&amp;" : ch === "<" ? "&lt;" : "&gt;"));

/** A link target: entities for `&` (Slack decodes them there too), and no character that would end the link. */
const slackHref = (href: string): string => slackEscape(href).replace(/\|/g, "%7C");

function inline(tokens: Token[] | undefined): string {
  return (tokens ?? []).map(inlineToken).join("");
}

function inlineToken(t: Token): string {
  switch (t.type) {
    case "strong":
      return `*${inline((t as Tokens.Strong).tokens)}*`;
    case "em":
      return `_${inline((t as Tokens.Em).tokens)}_`;
    case "del":
      return `~${inline((t as Tokens.Del).tokens)}~`;
    case "codespan":
      return `\`${slackEscape((t as Tokens.Codespan).text)}\``;
    case "br":
      return "\n";
    case "link": {
      const link = t as Tokens.Link;
      const label = inline(link.tokens);
      return label === slackEscape(link.href) ? `<${slackHref(link.href)}>` : `<${slackHref(link.href)}|${label}>`;
    }
    case "image": {
      const image = t as Tokens.Image;
      return `<${slackHref(image.href)}|${slackEscape(image.text || image.href)}>`;
    }
    case "text": {
      const text = t as Tokens.Text;
      return text.tokens ? inline(text.tokens) : slackEscape(decodeEntities(text.text));
    }
    case "escape":
      return slackEscape((t as Tokens.Escape).text);
    default:
      // Raw HTML and anything else is shown as the text it was written as.
      return slackEscape("text" in t && typeof t.text === "string" ? t.text : t.raw);
  }
}

function blocks(tokens: Token[]): string {
  return tokens
    .map(block)
    .filter((b) => b !== "")
    .join("\n");
}

function block(t: Token): string {
  switch (t.type) {
    case "space":
      return "";
    case "paragraph":
      return inline((t as Tokens.Paragraph).tokens);
    case "heading":
      return `*${inline((t as Tokens.Heading).tokens)}*`;
    case "code":
      return `\`\`\`\n${slackEscape((t as Tokens.Code).text)}\n\`\`\``;
    case "blockquote":
      // The quote's own `>` is mrkdwn, so it stays raw.
      return blocks((t as Tokens.Blockquote).tokens)
        .split("\n")
        .map((line) => `> ${line}`)
        .join("\n");
    case "list": {
      const list = t as Tokens.List;
      const start = typeof list.start === "number" ? list.start : 1;
      return list.items
        .map((item, i) => {
          const body = blocks(item.tokens).split("\n").join("\n   ");
          return `${list.ordered ? `${start + i}.` : "•"} ${body}`;
        })
        .join("\n");
    }
    case "table": {
      const table = t as Tokens.Table;
      return [table.header, ...table.rows].map((row) => row.map((cell) => inline(cell.tokens)).join(" | ")).join("\n");
    }
    case "hr":
      return "───";
    case "text":
      return inlineToken(t);
    default:
      return inlineToken(t);
  }
}

/** Markdown as Slack mrkdwn. */
export function markdownToSlack(md: string): string {
  return blocks(marked.lexer(md, { gfm: true, breaks: true })).trim();
}

/** The message's body as Slack mrkdwn, whatever it was written in. */
export function slackBody(m: NotifyMessage): string {
  if (m.format === "markdown") return markdownToSlack(m.body);
  return slackEscape(m.format === "html" ? htmlToText(m.body) : m.body);
}

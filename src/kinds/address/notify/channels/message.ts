/**
 * What a send carries, and the forms a channel can ask it in: plain text, Markdown or HTML,
 * converted from what the sender wrote (Markdown rendered by `marked`; HTML reduced to text by
 * dropping tags and decoding entities), so a channel takes the richest form its API renders.
 */
import { marked } from "marked";

export const FORMATS = ["text", "markdown", "html"] as const;
export type Format = (typeof FORMATS)[number];
/** ntfy's five levels; each channel maps them onto its own scale. */
export const PRIORITIES = ["min", "low", "normal", "high", "max"] as const;
export type Priority = (typeof PRIORITIES)[number];

export interface NotifyMessage {
  title: string | null;
  body: string;
  format: Format;
  priority: Priority;
  tags: string[];
  /** A URL of a file (an image, a log) the channel shows or links, where it takes one. */
  attach: string | null;
  /** Identifies the send (an idempotency or deduplication key where the API takes one). */
  id: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/** Character references (`&amp;`, `&#39;`, `&#x2713;`) as the characters they stand for; unknown names kept. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, e: string) =>
    e[0] === "#"
      ? String.fromCodePoint(e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : Number(e.slice(1)))
      : (ENTITIES[e.toLowerCase()] ?? all),
  );
}

export function htmlToText(html: string): string {
  const text = html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, "")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/(p|div|h[1-6]|li|tr|blockquote|pre)>/gi, "\n")
    .replace(/<li[^>]*>/gi, "- ")
    .replace(/<[^>]+>/g, "");
  return decodeEntities(text)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

export function escapeHtmlText(text: string): string {
  return text.replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]!);
}

export function markdownToHtml(md: string): string {
  return (marked.parse(md, { async: false, gfm: true, breaks: true }) as string).trim();
}

/** The body as plain text. */
export function asText(m: NotifyMessage): string {
  if (m.format === "html") return htmlToText(m.body);
  if (m.format === "markdown") return htmlToText(markdownToHtml(m.body));
  return m.body;
}

/** The body as Markdown (plain text is taken as it is: most chat Markdown leaves ordinary prose alone). */
export function asMarkdown(m: NotifyMessage): string {
  return m.format === "html" ? htmlToText(m.body) : m.body;
}

export function asHtml(m: NotifyMessage): string {
  if (m.format === "html") return m.body;
  if (m.format === "markdown") return markdownToHtml(m.body);
  return escapeHtmlText(m.body).replace(/\n/g, "<br>");
}

/** Title and body as one text, for channels without a title field. */
export function titled(m: NotifyMessage, body = asText(m)): string {
  return m.title ? `${m.title}\n${body}` : body;
}

/** Cuts text to a provider's hard limit (by code points, ending with an ellipsis). */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** Maps the five levels onto a channel's scale, lowest first. */
export function level<T>(p: Priority, scale: readonly [T, T, T, T, T]): T {
  return scale[PRIORITIES.indexOf(p)]!;
}

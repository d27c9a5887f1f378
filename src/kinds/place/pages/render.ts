/**
 * A page's source as the HTML its address serves. Markdown goes through the safe renderer (raw
 * HTML shown as text) into a readable frame; HTML is served as written, with the owner's title
 * and description put in its head. Either way the answer is sandboxed (public-answer.ts,
 * authoredPolicy): that, not rewriting the owner's markup, is what keeps scripts out.
 */
import { safeMarkdown } from "../../../site/markdown";
import { escapeHtml, htmlDocument } from "../../../site/layout";

export interface Source {
  format: "markdown" | "html";
  content: string;
  title: string | null;
  description: string | null;
}

/** Link-preview tags (Open Graph). */
function previewTags(title: string | null, description: string | null): string {
  const tags: string[] = [];
  if (title !== null) tags.push(`<meta property="og:title" content="${escapeHtml(title)}">`);
  if (description !== null) tags.push(`<meta property="og:description" content="${escapeHtml(description)}">`);
  if (tags.length) tags.push(`<meta property="og:type" content="website">`);
  return tags.join("\n");
}

/** The text of the first heading, as a Markdown page's title when the owner gave none. */
function firstHeading(markdown: string): string | null {
  const m = /^#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(markdown);
  return m ? m[1]!.trim() : null;
}

/**
 * Puts the title and preview tags into the owner's document: in its head (replacing its own title), or in front of it.
 */
function intoHead(html: string, title: string | null, description: string | null): string {
  if (title === null && description === null) return html;
  const doc = title === null ? html : html.replace(/<title\b[^>]*>[\s\S]*?<\/title\s*>/i, "");
  const tags = [
    title === null ? "" : `<title>${escapeHtml(title)}</title>\n`,
    description === null ? "" : `<meta name="description" content="${escapeHtml(description)}">\n`,
    `${previewTags(title, description)}\n`,
  ].join("");
  const head = /<head\b[^>]*>/i.exec(doc);
  if (head) return doc.slice(0, head.index + head[0].length) + "\n" + tags + doc.slice(head.index + head[0].length);
  const root = /<html\b[^>]*>/i.exec(doc);
  if (root)
    return (
      doc.slice(0, root.index + root[0].length) + `\n<head>\n${tags}</head>` + doc.slice(root.index + root[0].length)
    );
  return tags + doc;
}

export function render(source: Source): string {
  if (source.format === "html") return intoHead(source.content, source.title, source.description);
  const title = source.title ?? firstHeading(source.content) ?? "Untitled page";
  return htmlDocument({
    title,
    description: source.description ?? "",
    head: previewTags(source.title ?? title, source.description),
    body: `<main class="wrap" id="main">\n${safeMarkdown(source.content)}</main>`,
  });
}

/**
 * Markdown from strangers rendered for our own origin: raw HTML in it is shown as text, links
 * keep only http(s) and mailto targets (never javascript: or data:), and images become links
 * (pages here load nothing from elsewhere). A Marked instance of its own, so other uses of
 * `marked` (notify's channels) keep their defaults.
 */
import { Marked, type Tokens } from "marked";
import { escapeHtml } from "./layout";

const SAFE_HREF = /^(https?:|mailto:)/i;

const md = new Marked({ gfm: true, breaks: true, async: false });
md.use({
  renderer: {
    html: (token: Tokens.HTML | Tokens.Tag) => escapeHtml(token.text),
    link(token: Tokens.Link) {
      const text = this.parser.parseInline(token.tokens);
      return SAFE_HREF.test(token.href)
        ? `<a href="${escapeHtml(token.href)}" rel="noopener noreferrer nofollow">${text}</a>`
        : text;
    },
    image: (token: Tokens.Image) =>
      SAFE_HREF.test(token.href)
        ? `<a href="${escapeHtml(token.href)}" rel="noopener noreferrer nofollow">` +
          `${escapeHtml(token.text || token.href)}</a>`
        : escapeHtml(token.text),
  },
});

export function safeMarkdown(source: string): string {
  return md.parse(source) as string;
}

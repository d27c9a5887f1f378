/**
 * rss: an RSS 2.0, RSS 1.0 (RDF) or Atom feed, parsed by fast-xml-parser (pure JavaScript, no DOM; a DOCTYPE's entities
 * bounded in number, size and expansion, so a hostile feed cannot blow up). Items are known by guid/id, else link, else
 * title and date; the ids of the last MAX_SEEN_ITEMS are remembered, and the items not among them are the news of a
 * check.
 */
import { XMLParser } from "fast-xml-parser";
import type { Json } from "../../../../json";
import type { Check } from "../check-schema";
import { MAX_ITEMS_PER_EVENT, MAX_SEEN_ITEMS } from "../limits";
import { failed, fetchExpected, passed, type CheckContext, type Outcome } from "./outcome";

type RssCheck = Extract<Check, { type: "rss" }>;
type Node = Record<string, unknown>;

export interface FeedItem {
  id: string;
  title: string | null;
  link: string | null;
  published: string | null;
  summary: string | null;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  removeNSPrefix: true,
  htmlEntities: false,
  processEntities: {
    enabled: true,
    maxEntityCount: 50,
    maxEntitySize: 1000,
    maxTotalExpansions: 1000,
    maxExpandedLength: 100_000,
  },
  isArray: (name) => name === "item" || name === "entry" || name === "link",
});

/** A node's text, whether it came as a string, a number or an element with attributes. */
function textOf(node: unknown): string | null {
  if (typeof node === "string") return node.trim() || null;
  if (typeof node === "number") return String(node);
  if (Array.isArray(node)) return textOf(node[0]);
  if (node && typeof node === "object" && "#text" in node) return textOf((node as Node)["#text"]);
  return null;
}

/** Atom's link is an element with href (rel alternate preferred); RSS's is text. */
function linkOf(node: unknown): string | null {
  const links = Array.isArray(node) ? node : node === undefined ? [] : [node];
  const hrefs = links.map((l) =>
    l && typeof l === "object"
      ? { href: (l as Node)["@_href"], rel: (l as Node)["@_rel"] }
      : { href: l, rel: undefined },
  );
  const best = hrefs.find((l) => l.rel === undefined || l.rel === "alternate") ?? hrefs[0];
  return best ? textOf(best.href) : null;
}

const cut = (text: string | null, max: number) =>
  text === null ? null : text.length > max ? `${text.slice(0, max)}…` : text;

function itemOf(node: Node): FeedItem {
  const title = textOf(node.title);
  const link = linkOf(node.link);
  const published = textOf(node.pubDate ?? node.published ?? node.updated ?? node.date);
  const id = textOf(node.guid ?? node.id) ?? link ?? `${title ?? ""}|${published ?? ""}`;
  return {
    id: cut(id, 500)!,
    title: cut(title, 300),
    link: cut(link, 2048),
    published,
    summary: cut(textOf(node.description ?? node.summary), 500),
  };
}

/** The feed's items in document order (newest first in nearly every feed), or why it is no feed. */
export function parseFeed(xml: string): FeedItem[] | string {
  let doc: Node;
  try {
    doc = parser.parse(xml) as Node;
  } catch (err) {
    return `The feed is not well-formed XML: ${err instanceof Error ? err.message : String(err)}`;
  }
  const rss = doc.rss as Node | undefined;
  const channel = (rss?.channel ?? (doc.RDF as Node | undefined)) as Node | undefined;
  const items = (channel?.item ?? (doc.RDF as Node | undefined)?.item ?? (doc.feed as Node | undefined)?.entry) as
    Node[] | undefined;
  if (!rss && !doc.RDF && !doc.feed) return "The answer is neither RSS nor Atom.";
  return (items ?? []).filter((i) => i && typeof i === "object").map(itemOf);
}

export async function runFeedCheck(c: CheckContext, check: RssCheck): Promise<Outcome> {
  const fetched = await fetchExpected(c, check);
  if ("ok" in fetched) return fetched;
  const { answer, evidence } = fetched;
  const items = parseFeed(new TextDecoder().decode(answer.body));
  if (typeof items === "string") return failed(items, evidence);
  const seen = c.memo === null ? null : new Set(JSON.parse(c.memo) as string[]);
  const fresh = seen === null ? [] : items.filter((i) => !seen.has(i.id));
  // New ids first, then the old ones still remembered, up to the bound.
  const remembered = [...new Set([...items.map((i) => i.id), ...(seen ?? [])])].slice(0, MAX_SEEN_ITEMS);
  const change =
    fresh.length > 0
      ? {
          summary: `${fresh.length} new item(s) in the feed.`,
          before: null,
          after: fresh.length,
          items: fresh.slice(0, MAX_ITEMS_PER_EVENT) as unknown as Json[],
        }
      : null;
  return passed({ ...evidence, value: items.length, change, memo: JSON.stringify(remembered) });
}

/**
 * What `changed` compares. By default the exact bytes; with `selector`, only
 * the text inside the matching elements of an HTML page (the part an agent
 * watches: a price, a status line), so ads and timestamps elsewhere are not
 * changes; with `ignore_whitespace`, text with whitespace runs collapsed.
 * The selector runs in HTMLRewriter, the runtime's streaming parser: no
 * caller-supplied regex or script ever runs here.
 */
import { digestHex } from "../../../bytes";

export const TEXTUAL = /^(text\/|application\/(json|xml|javascript|ecmascript|ld\+json)|[^;]*\+(json|xml))/i;
const HTML = /^(text\/html|application\/xhtml\+xml)/i;
/** The selected text kept with a snapshot (and sent in its event) is cut here; the hash covers all of it. */
export const SELECTED_TEXT_MAX = 2000;

/**
 * Why the runtime's parser refuses `selector`, or null; null too where there is no HTMLRewriter (the OpenAPI build in
 * Node).
 */
export function selectorProblem(selector: string): string | null {
  if (typeof HTMLRewriter === "undefined") return null;
  try {
    new HTMLRewriter().on(selector, {});
    return null;
  } catch (err) {
    return err instanceof Error ? err.message.replace(/^Parser error: /, "") : "is not a supported CSS selector";
  }
}

export async function selectText(body: Uint8Array, selector: string): Promise<string> {
  const parts: string[] = [];
  await new HTMLRewriter()
    .on(selector, { text: (t) => void parts.push(t.text) })
    .transform(new Response(body))
    .arrayBuffer();
  return parts.join("");
}

export interface Compared {
  compareSha256: string;
  /** The selected text (whitespace collapsed, cut at SELECTED_TEXT_MAX), when a selector applied. */
  selectedText: string | null;
}

/**
 * What of a snapshot's config the comparison reads (schema.ts's SnapshotConfig has it; named here, as schema.ts imports
 * this file's limits).
 */
export interface CompareOptions {
  selector?: string;
  ignore_whitespace: boolean;
}

export async function compareBasis(
  config: CompareOptions,
  body: Uint8Array,
  sha256: string,
  contentType: string | null,
): Promise<Compared> {
  const type = contentType ?? "";
  const selecting = config.selector !== undefined && HTML.test(type);
  let text: string;
  if (selecting) text = await selectText(body, config.selector!);
  else if (config.ignore_whitespace && TEXTUAL.test(type)) text = new TextDecoder().decode(body);
  else return { compareSha256: sha256, selectedText: null };
  const collapsed = text.replace(/\s+/g, " ").trim();
  const compared = config.ignore_whitespace ? collapsed : text;
  return {
    compareSha256: await digestHex(new TextEncoder().encode(compared)),
    selectedText: selecting ? collapsed.slice(0, SELECTED_TEXT_MAX) : null,
  };
}

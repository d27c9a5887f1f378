/**
 * The MCP protocol revisions served on `/mcp`, and what each one has. Every
 * difference between them that this server honours is a flag here, so the
 * transport and the result shapes ask one table rather than compare dates.
 */
export const REVISIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;

export type Revision = (typeof REVISIONS)[number];

/** The stateless revision: no initialize, version and capabilities in every request's `_meta`. */
export const MODERN: Revision = "2026-07-28";

/** The newest revision with an `initialize` handshake: what a legacy client asking for an unknown one is offered. */
export const LATEST_LEGACY: Revision = "2025-11-25";

/**
 * A request without MCP-Protocol-Version that is not an initialize: 2025-03-26 predates the
 * header, and each revision's transport says to assume it.
 */
export const HEADERLESS: Revision = "2025-03-26";

export function isRevision(value: unknown): value is Revision {
  return typeof value === "string" && (REVISIONS as readonly string[]).includes(value);
}

/** Revision dates compare as strings (YYYY-MM-DD). */
const atLeast = (revision: Revision, since: Revision) => revision >= since;

export interface Features {
  /**
   * Stateless: server/discover, `_meta` per request, `resultType` and cache hints on results; no initialize, ping or
   * logging/setLevel.
   */
  modern: boolean;
  /** JSON-RPC batches: added in 2025-03-26, removed in 2025-06-18; 2024-11-05's schema has none. */
  batches: boolean;
  /** Streamable HTTP (2025-03-26 on): the Accept rule, and SSE answers to a POST (progress rides there). */
  streamableHttp: boolean;
  /** Tool annotations (readOnlyHint, …): 2025-03-26 on. */
  annotations: boolean;
  /**
   * The `completions` capability and completion `context`: declared from 2025-03-26 (completion itself exists since
   * 2024-11-05).
   */
  completionsCapability: boolean;
  /** `title` beside `name`, `structuredContent` and `outputSchema`: 2025-06-18 on. */
  structured: boolean;
  /** Icons on the server, tools, resources and prompts; Implementation's description and websiteUrl: 2025-11-25 on. */
  icons: boolean;
  /** JSON-RPC code of a resource that does not exist: -32002 until 2025-11-25, -32602 (Invalid params) after. */
  resourceNotFoundCode: number;
}

export function features(revision: Revision): Features {
  const modern = revision === MODERN;
  return {
    modern,
    batches: revision === "2025-03-26",
    streamableHttp: atLeast(revision, "2025-03-26"),
    annotations: atLeast(revision, "2025-03-26"),
    completionsCapability: atLeast(revision, "2025-03-26"),
    structured: atLeast(revision, "2025-06-18"),
    icons: atLeast(revision, "2025-11-25"),
    resourceNotFoundCode: modern ? -32602 : -32002,
  };
}

/**
 * Version negotiation of `initialize` (every legacy revision's lifecycle): the client's version
 * when it is one we serve with a handshake, else the newest that has one. A request for the
 * stateless revision through initialize gets the newest legacy one: that revision has no handshake.
 */
export function negotiate(requested: string): Revision {
  return isRevision(requested) && requested !== MODERN ? requested : LATEST_LEGACY;
}

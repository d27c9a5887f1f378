/**
 * Who this server is and what it offers, as each revision can say it: the identity (`serverInfo`
 * in initialize, `_meta` in 2026-07-28), the capabilities, the instructions for the model, and
 * the one icon every listing points at (served by the worker itself, so a tool list stays small).
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { serviceUrls } from "../http/urls";
import { features, type Revision } from "./revisions";

export const SERVER_VERSION = "1.0.0";

export const ICON_PATH = "/mcp/icon.svg";

/** A clock face in a rounded square: the service's mark, for clients that show one (2025-11-25 icons). */
export const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" ' +
  'fill="#1f3a5f"/><circle cx="32" cy="32" r="19" fill="none" stroke="#f5f1e6" stroke-width="5"/><path ' +
  'd="M32 20v12l8 6" fill="none" stroke="#e0a33b" stroke-width="5" stroke-linecap="round"/></svg>';

export function icons(c: Context<AppEnv>): Record<string, unknown>[] {
  return [{ src: `${serviceUrls(c).baseUrl}${ICON_PATH}`, mimeType: "image/svg+xml", sizes: ["any"] }];
}

export const INSTRUCTIONS =
  "Persistence for AI agents: every resource lives for a TTL. Start with list_kinds, then describe_kind " +
  "for one kind's " +
  "schemas, examples and prices; create_resource makes one (its `management_token` is returned once: keep it) and " +
  "call_operation runs its operations. Tools that do work are paid: send `Authorization: Bearer zv_…` (a " +
  "credit token) " +
  'or an OAuth access token on this connection, or pay one call with x402 in `_meta["x402/payment"]` (a call without ' +
  "payment returns the terms); buy_credits buys a credit token with x402. list_prices, list_kinds and " +
  "describe_kind are free. " +
  "For typed tools of chosen kinds (create_<kind>, <kind>_<operation>), connect to " +
  "/mcp?toolsets=<family or kind>,… " +
  "(families: time, address, memory, place, watching, utilities; or all). Resources: the price list, " +
  "/llms.txt and each kind's description.";

const title = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * MCP Implementation: name and version in every revision; a title from 2025-06-18; description, website and icons from
 * 2025-11-25.
 */
export function serverInfo(c: Context<AppEnv>, revision: Revision): Record<string, unknown> {
  const f = features(revision);
  const name = c.env.SERVICE_NAME;
  return {
    name,
    version: SERVER_VERSION,
    ...(f.structured ? { title: title(name) } : {}),
    ...(f.icons
      ? {
          description:
            "Paid persistence for AI agents: timers, stores, queues, addresses and more, each living for a TTL.",
          websiteUrl: serviceUrls(c).baseUrl,
          icons: icons(c),
        }
      : {}),
  };
}

/**
 * Nothing here changes while a client is connected (the lists change with a deploy), and the
 * server keeps no session to notify or remember a subscription in: no listChanged, no subscribe.
 * `logging` is declared where logging/setLevel exists; no message is ever sent (nothing to say).
 */
export function capabilities(revision: Revision): Record<string, unknown> {
  const f = features(revision);
  return {
    tools: { listChanged: false },
    resources: { subscribe: false, listChanged: false },
    prompts: { listChanged: false },
    ...(f.completionsCapability ? { completions: {} } : {}),
    ...(f.modern ? {} : { logging: {} }),
  };
}

/** OpenAPI tags: one per family, plus Manage, Money, Sandboxes and Ask (docs/api.md). */
import type { Family } from "../kind/kind";

export const TAGS: Record<Family, string> = {
  time: "Time",
  address: "Address",
  memory: "Memory",
  place: "Place",
  watching: "Watching",
  utilities: "Utilities",
};

export const TAG_DESCRIPTIONS = [
  { name: "Time", description: "Schedulers, timers, notary, attested fetch." },
  { name: "Address", description: "Public webhook addresses, relays, approval gates." },
  { name: "Memory", description: "Key-value, journals, secrets, blobs, objects, queues, counters." },
  { name: "Place", description: "Hosted pages, sites, links, PDF." },
  { name: "Watching", description: "Watches, their composition, escalations." },
  { name: "Utilities", description: "OCR, conversion, fixed-IP egress, transfers." },
  { name: "Manage", description: "Status, extend, export and cancel, with the management token." },
  { name: "Money", description: "Credits, balance, sub-tokens, prices." },
  {
    name: "Sandboxes",
    description: "Free sandboxes with their own money and a clock you move: a plan's days run in one call.",
  },
  { name: "Ask", description: "Free feedback and abuse reporting." },
  { name: "Public addresses", description: "A resource's public face at `/p/{public_id}`: no credentials, free." },
  {
    name: "Operator",
    description: "Liveness for anyone; readiness and the rest behind the operator token (ADMIN_TOKEN).",
  },
  { name: "OAuth", description: "Client credentials: an access token for a credit token." },
  { name: "MCP", description: "JSON-RPC tool endpoint for agents (MCP)." },
  {
    name: "Reference",
    description: "This document (whole, or a slice per kind or family) and `/llms.txt`, its index for agents.",
  },
];

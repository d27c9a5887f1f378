/**
 * Answers a public face said may be given again (`reuse` on its route and answer: a site's
 * files), kept in the isolate so a hit is served without waking the resource's object: the
 * object's round trip is most of what a static file costs.
 *
 * Answers are kept per address and content version. Which version is current is learned from
 * the object's own answers and trusted for REUSE_MS; after that the next request goes to the
 * object again, which confirms the version or names a new one. So a redeploy reaches every
 * isolate within REUSE_MS, and at once the isolate that took it (a write to the resource
 * forgets it here); a reader still never sees a half-applied deploy, since every answer of one
 * version names that version's own files, and one whose bytes were since deleted sends the
 * request to the object after all. Nothing is reused past the resource's expiry.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import type { PublicAnswer, PublicRoute } from "../kind/public-face";

/** How long a version learned from the object is trusted without asking it again. */
export const REUSE_MS = 2_000;
/** Answers kept per isolate (each a key and a few headers), the least recently used dropped first. */
const MAX_ANSWERS = 5_000;

interface Current {
  resourceId: string;
  version: string;
  checkedAt: number;
  until: number;
}

const current = new Map<string, Current>();
/** The address each resource was last seen at (one at a time: rotating it is a write, which forgets the old). */
const addressOf = new Map<string, string>();
const answers = new Map<string, PublicAnswer>();

/** What the answer to this request depends on, on a route that declares `reuse`; null elsewhere. */
export function reuseKey(
  route: PublicRoute,
  method: string,
  path: string,
  search: string,
  headers: Headers,
): string | null {
  if (!route.reuse || (method !== "GET" && method !== "HEAD")) return null;
  return [path, search, ...route.reuse.vary.map((h) => headers.get(h) ?? "")].join("\n");
}

/** The answer kept for this request at the address's current version, if that version is still trusted. */
export function reusedAnswer(publicId: string, key: string, now: number): PublicAnswer | null {
  const known = current.get(publicId);
  if (!known || now - known.checkedAt > REUSE_MS || now >= known.until) return null;
  const id = `${publicId}\n${known.version}\n${key}`;
  const answer = answers.get(id);
  if (!answer) return null;
  answers.delete(id);
  answers.set(id, answer);
  return answer;
}

/** Learns from the object's answer: keeps it if it may be reused, else forgets the address (it changed, or ended). */
export function learnAnswer(
  publicId: string,
  resourceId: string,
  key: string | null,
  answer: PublicAnswer | null,
  now: number,
): void {
  const reuse = key !== null ? answer?.reuse : undefined;
  if (!reuse) {
    forgetAddress(publicId);
    return;
  }
  const known = current.get(publicId);
  if (known && known.version !== reuse.version) dropAnswers(publicId);
  current.set(publicId, { resourceId, version: reuse.version, checkedAt: now, until: reuse.until ?? Infinity });
  addressOf.set(resourceId, publicId);
  answers.set(`${publicId}\n${reuse.version}\n${key}`, answer!);
  if (answers.size > MAX_ANSWERS) answers.delete(answers.keys().next().value!);
  if (current.size > MAX_ANSWERS) forgetAddress(current.keys().next().value!);
}

function dropAnswers(publicId: string): void {
  for (const id of answers.keys()) if (id.startsWith(`${publicId}\n`)) answers.delete(id);
}

export function forgetAddress(publicId: string): void {
  const known = current.get(publicId);
  if (!known) return;
  current.delete(publicId);
  if (addressOf.get(known.resourceId) === publicId) addressOf.delete(known.resourceId);
  dropAnswers(publicId);
}

/** A write to the resource (a deploy, a rollback, a settings change, its end): its address answers afresh. */
export function forgetResource(resourceId: string): void {
  const publicId = addressOf.get(resourceId);
  if (publicId) forgetAddress(publicId);
}

/** After any write to the API, the resources its path names answer afresh at their addresses. */
export const forgetWrittenResources = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.req.method === "GET" || c.req.method === "HEAD") return;
  for (const segment of c.req.path.split("/")) if (segment.startsWith("r_")) forgetResource(segment);
});

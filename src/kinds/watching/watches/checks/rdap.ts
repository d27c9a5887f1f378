/**
 * domain_expiry: the registration's `expiration` event from RDAP (RFC 9083 §4.5), read at
 * `{rdap_url}/domain/{domain}` (rdap.org redirects to the registry's own server, as the IANA
 * bootstrap file says; redirects are followed, each hop checked).
 */
import type { Check } from "../check-schema";
import { excerptOf, failed, failure, passed, timedFetch, type CheckContext, type Outcome } from "./outcome";

type RdapCheck = Extract<Check, { type: "domain_expiry" }>;
const MAX_RDAP_BYTES = 512 * 1024;
const DAY = 86_400_000;

export async function runRdapCheck(c: CheckContext, check: RdapCheck): Promise<Outcome> {
  const url =
    `${check.rdap_url.replace(/\/+$/, "")}/domain/` +
    `${encodeURIComponent(check.domain.replace(/\.$/, "").toLowerCase())}`;
  let fetched: Awaited<ReturnType<typeof timedFetch>>;
  try {
    fetched = await timedFetch(c, url, {
      headers: { accept: "application/rdap+json, application/json" },
      maxBytes: MAX_RDAP_BYTES,
    });
  } catch (err) {
    return failure(err);
  }
  const { answer, durationMs } = fetched;
  const evidence: Partial<Outcome> = { status: answer.status, durationMs, excerpt: excerptOf(answer.body) };
  if (answer.status !== 200)
    return failed(
      answer.status === 404
        ? `The RDAP service does not know ${check.domain}.`
        : `The RDAP service answered ${answer.status}.`,
      evidence,
    );
  let events: unknown;
  try {
    events = (JSON.parse(new TextDecoder().decode(answer.body)) as { events?: unknown }).events;
  } catch {
    return failed("The RDAP answer is not JSON.", evidence);
  }
  const expiration = Array.isArray(events)
    ? (events.find(
        (e) => e && typeof e === "object" && (e as { eventAction?: unknown }).eventAction === "expiration",
      ) as { eventDate?: unknown } | undefined)
    : undefined;
  const at = typeof expiration?.eventDate === "string" ? Date.parse(expiration.eventDate) : NaN;
  if (Number.isNaN(at)) return failed("The RDAP answer has no expiration event.", evidence);
  const daysLeft = Math.floor((at - c.ctx.now) / DAY);
  const value = { expires_at: new Date(at).toISOString(), days_left: daysLeft };
  return daysLeft >= check.days_before
    ? passed({ ...evidence, value })
    : failed(
        `${check.domain} expires on ${value.expires_at} (${daysLeft} day(s) left; alert at ${check.days_before}).`,
        { ...evidence, value },
      );
}

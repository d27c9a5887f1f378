/**
 * One check of a watch, by type: the HTTP types read one answer (http.ts), the others ask a
 * resolver (dns.ts), a feed (feed.ts), RDAP (rdap.ts) or an EVM node (chain.ts); a heartbeat only
 * looks at when the last ping came. Every outbound request goes through the egress guard
 * (fetchGuarded) with the watch's own User-Agent, timeout and size cap. A check never throws: what
 * goes wrong is its failure, with the reason.
 */
import { fieldError } from "../../../../http/errors";
import { checkExpression, riskyRegex } from "../../../../expressions/jsonata";
import { selectorProblem } from "../../../time/snapshots/compare";
import type { WatchConfig } from "../schema";
import { runChainCheck } from "./chain";
import { runDnsCheck } from "./dns";
import { runFeedCheck } from "./feed";
import { runHttpCheck } from "./http";
import { failed, failure, passed, type CheckContext, type Outcome } from "./outcome";
import { runRdapCheck } from "./rdap";

export type { Change, Outcome } from "./outcome";

/** Heartbeat: up when a ping (not a failure report) came within the interval plus the grace. */
function heartbeat(c: CheckContext, lastPing: { at: number; failed: boolean } | null): Outcome {
  if (c.config.check.type !== "heartbeat") throw new Error("not a heartbeat");
  const window = (c.config.interval_seconds + c.config.check.grace_seconds) * 1000;
  if (lastPing === null || lastPing.at < c.ctx.now - window)
    return failed(`No ping within the last ${window / 1000} s.`);
  return lastPing.failed
    ? failed("The last ping reported a failure.", { value: new Date(lastPing.at).toISOString() })
    : passed({ value: new Date(lastPing.at).toISOString() });
}

export async function runCheck(c: CheckContext, lastPing: { at: number; failed: boolean } | null): Promise<Outcome> {
  const check = c.config.check;
  try {
    switch (check.type) {
      case "heartbeat":
        return heartbeat(c, lastPing);
      case "dns_record":
        return await runDnsCheck(c, check);
      case "rss":
        return await runFeedCheck(c, check);
      case "domain_expiry":
        return await runRdapCheck(c, check);
      case "chain_balance":
        return await runChainCheck(c, check);
      default:
        return await runHttpCheck(c, check);
    }
  } catch (err) {
    // A fault of the check's own code is still only this check's failure; it is logged to be fixed.
    console.error("watch check failed unexpectedly", err);
    return failure(err);
  }
}

/** What the schema cannot say about a check, refused at create (422 naming the field). */
export function checkCreatable(config: WatchConfig): void {
  const check = config.check;
  const regexes: [string, string][] = [];
  if (check.type === "content_change") {
    check.ignore.forEach((r, i) => regexes.push([`check.ignore.${i}`, r]));
    const problem = check.selector === null ? null : selectorProblem(check.selector);
    if (problem) throw fieldError("check.selector", problem);
    if (check.selector !== null && check.region !== null)
      throw fieldError("check.region", "give selector or region, not both");
  }
  if (check.type === "header") {
    if (check.matches !== undefined) regexes.push(["check.matches", check.matches]);
    if ([check.equals !== undefined, check.matches !== undefined, check.absent].filter(Boolean).length > 1)
      throw fieldError("check.absent", "give at most one of equals, matches and absent");
  }
  if (check.type === "number_threshold") {
    if ((check.regex === undefined) === (check.expression === undefined))
      throw fieldError("check.regex", "give exactly one of regex and expression");
    if (check.regex !== undefined) regexes.push(["check.regex", check.regex]);
    if (check.expression !== undefined) checkExpression(check.expression, "check.expression");
    if (check.operator === "changed_by_percent" && check.value < 0)
      throw fieldError("check.value", "a percentage is not negative");
  }
  if (check.type === "json_value") {
    checkExpression(check.expression, "check.expression");
    if (check.operator !== "changed" && check.expected === undefined)
      throw fieldError("check.expected", `required with operator ${check.operator}`);
  }
  if (check.type === "response_time" && check.threshold_ms > config.timeout_ms)
    throw fieldError("check.threshold_ms", `must be at most timeout_ms (${config.timeout_ms})`);
  for (const [path, source] of regexes) {
    try {
      new RegExp(source);
    } catch (err) {
      throw fieldError(path, err instanceof Error ? err.message : "is not a regular expression");
    }
    const risky = riskyRegex(source);
    if (risky) throw fieldError(path, risky);
  }
}

/**
 * The checks that read one HTTP answer: the status first (expected_status), then the type's own
 * test of the body, a header, the final URL or the time it took. A JSONata expression, a
 * regular expression or a CSS selector only ever runs on the answer, bounded (expressions/jsonata.ts).
 */
import type { Json } from "../../../../json";
import { evaluate } from "../../../../expressions/jsonata";
import { sha256Hex } from "../../../../bytes";
import { selectText } from "../../../time/snapshots/compare";
import type { FetchedBody } from "../../../../delivery/fetch-guarded";
import type { Check } from "../check-schema";
import { compare, failed, fetchExpected, passed, type CheckContext, type Outcome } from "./outcome";

type HttpTypes =
  | "http_status"
  | "keyword"
  | "content_change"
  | "json_value"
  | "response_time"
  | "header"
  | "redirect"
  | "number_threshold";
type Of<T extends HttpTypes> = Extract<Check, { type: T }>;

const text = (body: Uint8Array) => new TextDecoder().decode(body);

function parseJson(body: Uint8Array): { ok: true; value: Json } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text(body)) as Json };
  } catch {
    return { ok: false };
  }
}

const same = (a: Json | null, b: Json | null) => JSON.stringify(a) === JSON.stringify(b);

/** The text content_change compares: the selection or region, noise removed, whitespace collapsed. */
async function comparedText(check: Of<"content_change">, answer: FetchedBody): Promise<string> {
  let content =
    check.selector !== null && /html/i.test(answer.headers["content-type"] ?? "")
      ? await selectText(answer.body, check.selector)
      : text(answer.body);
  if (check.region) {
    const start = content.indexOf(check.region.start);
    if (start < 0) return "";
    const from = start + check.region.start.length;
    const end = check.region.end === null ? -1 : content.indexOf(check.region.end, from);
    content = content.slice(from, end < 0 ? undefined : end);
  }
  for (const noise of check.ignore) content = content.replace(new RegExp(noise, "g"), "");
  return content.replace(/\s+/g, " ").trim();
}

const SHOWN_CHARS = 1000;

async function contentChange(
  c: CheckContext,
  check: Of<"content_change">,
  answer: FetchedBody,
  evidence: Partial<Outcome>,
): Promise<Outcome> {
  const now = await comparedText(check, answer);
  const memo = JSON.stringify({ sha256: sha256Hex(now), text: now.slice(0, SHOWN_CHARS) });
  const before = c.memo === null ? null : (JSON.parse(c.memo) as { sha256: string; text: string });
  const changed = before !== null && before.sha256 !== sha256Hex(now);
  const change = changed
    ? { summary: "The watched text changed.", before: before.text, after: now.slice(0, SHOWN_CHARS) }
    : null;
  return passed({ ...evidence, value: now.slice(0, SHOWN_CHARS), change, memo });
}

function contains(haystack: Json | null, needle: Json | undefined): boolean {
  if (typeof haystack === "string" && typeof needle === "string") return haystack.includes(needle);
  if (Array.isArray(haystack)) return haystack.some((item) => same(item, needle ?? null));
  return false;
}

async function jsonValue(
  c: CheckContext,
  check: Of<"json_value">,
  answer: FetchedBody,
  evidence: Partial<Outcome>,
): Promise<Outcome> {
  const parsed = parseJson(answer.body);
  if (!parsed.ok) return failed("The answer is not JSON.", evidence);
  const result = await evaluate(check.expression, parsed.value);
  if (!result.ok) return failed(`The expression failed: ${result.error}`, evidence);
  const value = result.value;
  if (check.operator === "changed") {
    const memo = JSON.stringify(value);
    const changed = c.memo !== null && c.memo !== memo;
    return passed({
      ...evidence,
      value,
      memo,
      change: changed ? { summary: "The value changed.", before: JSON.parse(c.memo!) as Json, after: value } : null,
    });
  }
  const expected = check.expected ?? null;
  const holds =
    check.operator === "contains"
      ? contains(value, check.expected)
      : check.operator === "==" || check.operator === "!="
        ? same(value, expected) === (check.operator === "==")
        : (typeof value === "number" && typeof expected === "number") ||
            (typeof value === "string" && typeof expected === "string")
          ? compare(value, check.operator, expected)
          : false;
  return holds
    ? passed({ ...evidence, value })
    : failed(`The value is ${JSON.stringify(value)}; expected ${check.operator} ${JSON.stringify(expected)}.`, {
        ...evidence,
        value,
      });
}

/** "1,234.50" and "1 234" read as numbers; anything else is no number. */
function numberIn(raw: string): number | null {
  const n = Number(raw.trim().replace(/[,_\s]/g, ""));
  return raw.trim() !== "" && Number.isFinite(n) ? n : null;
}

async function extractNumber(check: Of<"number_threshold">, answer: FetchedBody): Promise<number | string> {
  if (check.regex !== undefined) {
    const match = new RegExp(check.regex).exec(text(answer.body));
    if (!match) return "The expression matched nothing in the answer.";
    return numberIn(match[1] ?? match[0]) ?? `"${(match[1] ?? match[0]).slice(0, 100)}" is not a number.`;
  }
  const parsed = parseJson(answer.body);
  if (!parsed.ok) return "The answer is not JSON.";
  const result = await evaluate(check.expression!, parsed.value);
  if (!result.ok) return `The expression failed: ${result.error}`;
  const n =
    typeof result.value === "number" ? result.value : typeof result.value === "string" ? numberIn(result.value) : null;
  return n ?? `The expression gave ${JSON.stringify(result.value)?.slice(0, 100)}, not a number.`;
}

async function numberThreshold(
  c: CheckContext,
  check: Of<"number_threshold">,
  answer: FetchedBody,
  evidence: Partial<Outcome>,
): Promise<Outcome> {
  const n = await extractNumber(check, answer);
  if (typeof n === "string") return failed(n, evidence);
  if (check.operator !== "changed_by_percent") {
    return compare(n, check.operator, check.value)
      ? passed({ ...evidence, value: n })
      : failed(`${n} is not ${check.operator} ${check.value}.`, { ...evidence, value: n });
  }
  const before = c.memo === null ? null : Number(c.memo);
  // Against zero any move is an infinite change; so is any move at all when the threshold is 0.
  const percent =
    before === null ? 0 : before === 0 ? (n === 0 ? 0 : Infinity) : (Math.abs(n - before) / Math.abs(before)) * 100;
  const change =
    before !== null && percent > check.value
      ? {
          summary:
            `The number moved by ${Number.isFinite(percent) ? percent.toFixed(2) : "∞"}% (more than ` +
            `${check.value}%).`,
          before,
          after: n,
        }
      : null;
  // The baseline moves only on a reported change, so a slow drift is caught once it adds up.
  return passed({ ...evidence, value: n, change, memo: before === null || change ? String(n) : undefined });
}

function headerOutcome(check: Of<"header">, answer: FetchedBody, evidence: Partial<Outcome>): Outcome {
  const value = answer.headers[check.name.toLowerCase()] ?? null;
  const shown = { ...evidence, value };
  if (check.absent)
    return value === null ? passed(shown) : failed(`${check.name} is present: ${value.slice(0, 200)}`, shown);
  if (value === null) return failed(`${check.name} is absent.`, shown);
  if (check.equals !== undefined && value !== check.equals)
    return failed(`${check.name} is "${value.slice(0, 200)}", not "${check.equals.slice(0, 200)}".`, shown);
  if (check.matches !== undefined && !new RegExp(check.matches).test(value))
    return failed(`${check.name} "${value.slice(0, 200)}" does not match ${check.matches}.`, shown);
  return passed(shown);
}

function keywordOutcome(check: Of<"keyword">, answer: FetchedBody, evidence: Partial<Outcome>): Outcome {
  const body = text(answer.body);
  const found = check.case_sensitive
    ? body.includes(check.keyword)
    : body.toLowerCase().includes(check.keyword.toLowerCase());
  const wanted = check.mode === "present";
  return found === wanted
    ? passed({ ...evidence, value: found })
    : failed(`"${check.keyword.slice(0, 100)}" is ${found ? "present" : "absent"}.`, { ...evidence, value: found });
}

function redirectOutcome(check: Of<"redirect">, answer: FetchedBody, evidence: Partial<Outcome>): Outcome {
  const expected = new URL(check.final_url ?? check.url).href;
  const shown = { ...evidence, value: answer.url };
  if (answer.url === expected) return passed(shown);
  return failed(
    check.final_url === null ? `Redirected to ${answer.url}.` : `The redirects end at ${answer.url}, not ${expected}.`,
    shown,
  );
}

/** Runs an HTTP check: the fetch, the status, then the type's own test. */
export async function runHttpCheck(c: CheckContext, check: Of<HttpTypes>): Promise<Outcome> {
  const fetched = await fetchExpected(c, check);
  if ("ok" in fetched) return fetched;
  const { answer, durationMs, evidence } = fetched;
  switch (check.type) {
    case "http_status":
      return passed(evidence);
    case "keyword":
      return keywordOutcome(check, answer, evidence);
    case "content_change":
      return contentChange(c, check, answer, evidence);
    case "json_value":
      return jsonValue(c, check, answer, evidence);
    case "response_time":
      return durationMs <= check.threshold_ms
        ? passed({ ...evidence, value: durationMs })
        : failed(`The answer took ${durationMs} ms (threshold ${check.threshold_ms} ms).`, {
            ...evidence,
            value: durationMs,
          });
    case "header":
      return headerOutcome(check, answer, evidence);
    case "redirect":
      return redirectOutcome(check, answer, evidence);
    case "number_threshold":
      return numberThreshold(c, check, answer, evidence);
  }
}

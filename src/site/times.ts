/**
 * Times on pages for people (an approval's deadline, a capture's arrival, an incident's timeline):
 * written by the server in UTC in words ("27 Nov 2026, 15:22 UTC"), the exact instant in
 * `<time datetime>`, and rewritten in the reader's own time zone and language by a few lines of
 * script. The script is inline with the response's nonce (public pages allow nothing else), and
 * without it the page still reads right, in UTC.
 */
import { NONCE_SLOT } from "../kind/public-answer";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n: number) => String(n).padStart(2, "0");

/** `at` (Unix ms or an RFC 3339 string) in UTC, for people: "27 Nov 2026, 15:22 UTC" (with `seconds`, "15:22:26"). */
export function utcWords(at: number | string, seconds = false): string {
  const d = new Date(at);
  const clock = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}${seconds ? `:${two(d.getUTCSeconds())}` : ""}`;
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${clock} UTC`;
}

/** A `<time>` element the script shows in the reader's time zone; `seconds` where they matter (a request's arrival). */
export function timeHtml(at: number | string, seconds = false): string {
  const iso = new Date(at).toISOString();
  return `<time datetime="${iso}" data-local="${seconds ? "seconds" : "minutes"}">${utcWords(at, seconds)}</time>`;
}

/**
 * Rewrites every `time[data-local]` in the reader's zone and language, its zone named ("EST", "GMT+2");
 * the UTC words stay in its title. Plain ES2017, as the house's other page scripts are.
 */
const SCRIPT = `document.querySelectorAll("time[data-local]").forEach(function (el) {
  var at = new Date(el.getAttribute("datetime"));
  if (isNaN(at.getTime())) return;
  var options = {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short"
  };
  if (el.getAttribute("data-local") === "seconds") options.second = "2-digit";
  el.title = el.textContent;
  el.textContent = at.toLocaleString(undefined, options);
});`;

/** The script, with the response's nonce: put it at the end of a page's body. */
export const localTimesScript = `<script nonce="${NONCE_SLOT}">${SCRIPT}</script>`;

/**
 * What the Ask endpoints keep about a sender: never the IP, never a credential.
 *
 * The IP becomes a SHA-256 with a random salt of the current UTC day, kept in D1
 * and deleted once the day is over. Within a day the operator can see that
 * reports came from one source (spam, brigading); afterwards the live database
 * cannot link a hash to an address (the IPv4 space is small enough to brute-force
 * while the salt exists, so the salt must not outlive its day). D1's point-in-time
 * recovery still holds a deleted salt for up to 30 days: only a restore of the
 * database could link a report to an address within that time.
 */
import { randomBytes } from "../auth/ids";
import { sha256Hex } from "../bytes";
import { toHex } from "../bytes";
import { utcDay } from "../time";

const REDACTED = "[redacted credential]";

// Credentials a caller might paste into free text: our own tokens, webhook secrets, JWTs.
const CREDENTIAL_PATTERNS = [
  /\bzvm?_[0-9A-Za-z]{20,}/g,
  /\bwhsec_[A-Za-z0-9+/=]{20,}/g,
  /\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*/g,
];

export function redactCredentials(text: string): string {
  return CREDENTIAL_PATTERNS.reduce((out, pattern) => out.replace(pattern, REDACTED), text);
}

export function redactOptional(text: string | undefined): string | null {
  return text === undefined ? null : redactCredentials(text);
}

/** The salted hash of a client IP, or null when the platform did not tell us the IP. */
export async function clientHash(db: D1Database, ip: string | null, now: number): Promise<string | null> {
  if (!ip) return null;
  const day = utcDay(now);
  const fresh = toHex(randomBytes(32));
  // One round trip: create today's salt if it is the first use, drop older ones, read today's.
  const [, , read] = await db.batch([
    db.prepare("INSERT OR IGNORE INTO ask_salts (day, salt) VALUES (?, ?)").bind(day, fresh),
    db.prepare("DELETE FROM ask_salts WHERE day < ?").bind(day),
    db.prepare("SELECT salt FROM ask_salts WHERE day = ?").bind(day),
  ]);
  const salt = (read?.results[0] as { salt?: string } | undefined)?.salt;
  if (!salt) throw new Error("ask salt missing after insert");
  return sha256Hex(`${salt}:${ip}`);
}

/** For the daily cron: a day without any submission must not leave yesterday's salt behind. */
export async function sweepAskSalts(db: D1Database, now: number): Promise<void> {
  await db.prepare("DELETE FROM ask_salts WHERE day < ?").bind(utcDay(now)).run();
}

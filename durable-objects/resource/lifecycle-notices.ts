/**
 * When to send `resource.expiring` (24 h and 1 h before expires_at, docs/api.md#managing-a-resource).
 * A notice whose moment came before the resource was created is not owed; an
 * extension that moves expires_at makes the notices owed again.
 */
import type { MetaRow } from "./meta";

const NOTICES = [
  { bit: 1, hours: 24 },
  { bit: 2, hours: 1 },
] as const;

export interface Notice {
  bit: number;
  hours: 24 | 1;
  at: number;
}

function owed(meta: MetaRow): Notice[] {
  if (!meta.notify_url) return [];
  return NOTICES.map((n) => ({ ...n, at: meta.expires_at - n.hours * 3_600_000 })).filter(
    (n) => !(meta.notices_sent & n.bit) && n.at > meta.created_at,
  );
}

export function nextNoticeAt(meta: MetaRow): number | null {
  const times = owed(meta).map((n) => n.at);
  return times.length ? Math.min(...times) : null;
}

export function dueNotices(meta: MetaRow, now: number): Notice[] {
  return owed(meta).filter((n) => n.at <= now);
}

/** After an extension: notices whose moment is still ahead are owed again. */
export function noticesStillSent(meta: MetaRow, now: number): number {
  return NOTICES.reduce(
    (bits, n) => (meta.expires_at - n.hours * 3_600_000 > now ? bits & ~n.bit : bits),
    meta.notices_sent,
  );
}

/** Sends the notices that are due through `emit`; returns the notices_sent bits afterwards. */
export async function sendDueNotices(
  meta: MetaRow,
  now: number,
  emit: (type: string, data: Record<string, unknown>) => Promise<void>,
): Promise<number> {
  let sent = meta.notices_sent;
  for (const notice of dueNotices(meta, now)) {
    await emit("resource.expiring", { expires_at: new Date(meta.expires_at).toISOString(), hours_left: notice.hours });
    sent |= notice.bit;
  }
  return sent;
}

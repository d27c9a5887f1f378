/**
 * The operator's switch for public addresses (API.md §12): a disabled public id
 * answers as absent. Kept in D1 apart from any resource, because an address can
 * be disabled before, during and after the life of whatever serves it, and the
 * public router only needs one indexed lookup per request.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { serviceUrls } from "../http/urls";

export interface PublicAddressRow {
  public_id: string;
  reason: string;
  disabled_at: number;
}

export async function findDisabledPublicAddress(db: D1Database, publicId: string): Promise<PublicAddressRow | null> {
  return db.prepare("SELECT public_id, reason, disabled_at FROM disabled_public_addresses WHERE public_id = ?").bind(publicId).first<PublicAddressRow>();
}

/** Idempotent: disabling again updates the reason and keeps the first time it was disabled. */
export async function disablePublicAddress(db: D1Database, publicId: string, reason: string, now: number): Promise<PublicAddressRow> {
  const row = await db
    .prepare(
      `INSERT INTO disabled_public_addresses (public_id, reason, disabled_at) VALUES (?, ?, ?)
       ON CONFLICT (public_id) DO UPDATE SET reason = excluded.reason
       RETURNING public_id, reason, disabled_at`,
    )
    .bind(publicId, reason, now)
    .first<PublicAddressRow>();
  if (!row) throw new Error("disable returned no row");
  return row;
}

export async function enablePublicAddress(db: D1Database, publicId: string): Promise<void> {
  await db.prepare("DELETE FROM disabled_public_addresses WHERE public_id = ?").bind(publicId).run();
}

/** `{base}/p/{public_id}/…` → public_id, or null when the URL is not below the public base. */
export function publicIdOf(url: URL, publicBase: string, pattern: RegExp): string | null {
  const base = new URL(publicBase);
  const prefix = `${base.pathname.replace(/\/+$/, "")}/p/`;
  if (url.origin !== base.origin || !url.pathname.startsWith(prefix)) return null;
  const id = url.pathname.slice(prefix.length).split("/")[0] ?? "";
  return pattern.test(id) ? id : null;
}

/** Where public addresses live: PUBLIC_BASE_URL, else the API's own base (API.md §12). */
export function publicBaseUrl(c: Context<AppEnv>): string {
  return c.env.PUBLIC_BASE_URL || serviceUrls(c).baseUrl;
}

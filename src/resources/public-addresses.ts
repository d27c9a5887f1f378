/**
 * Public addresses (docs/api.md#public-addresses): their ids, where they live, and the operator's switch.
 *
 * A public id names its resource's object and kind, as management tokens do, so a request
 * reaches the object without a D1 read: `{kind}_{base62(resource id bytes ‖ 128 random bits)}`.
 * The object holds the whole id and compares it, so the random half is what makes an address
 * unguessable. Ids made before this layout (22 base62 characters) are still found through D1.
 *
 * A disabled public id answers as absent. The list is kept in D1 apart from any resource (an
 * address can be disabled before, during and after the life of whatever serves it) and mirrored
 * into the resource's object while it lives, so the hot path never reads D1.
 */
import type { Context } from "hono";
import type { AppEnv, Env } from "../env";
import { unwrap } from "../http/errors";
import { resourceStub } from "../stubs";
import { serviceUrls } from "../http/urls";
import { base62Length, decodeBase62, encodeBase62 } from "../auth/base62";
import { ID_BYTES, randomBytes } from "../auth/ids";
import { forgetAddress } from "./public-reuse";
import { memoized } from "../memo";

/** Any public id, of any layout (deliberately loose, so a future encoding fits). */
export const PUBLIC_ID_PATTERN = /^[0-9A-Za-z_-]{8,64}$/;
const RESOURCE_PREFIX = "r_";

/** A new public id for resource `resourceId` of `kind`. */
export function newPublicId(kind: string, resourceId: string): string {
  const id = decodeBase62(resourceId.slice(RESOURCE_PREFIX.length), ID_BYTES);
  if (!id) throw new Error(`malformed resource id ${resourceId}`);
  const bytes = new Uint8Array(2 * ID_BYTES);
  bytes.set(id, 0);
  bytes.set(randomBytes(ID_BYTES), ID_BYTES);
  return `${kind}_${encodeBase62(bytes)}`;
}

/**
 * The kind and resource a public id of the current layout names; null for any other string. Kept for the ids parsed
 * lately: every hit on a busy address parses the same one (a site's files).
 */
export const parsePublicId = memoized(parseId, 10_000, (_id, parsed) => parsed !== null);

function parseId(publicId: string): { kind: string; resourceId: string } | null {
  const cut = publicId.lastIndexOf("_");
  if (cut <= 0) return null;
  const bytes = decodeBase62(publicId.slice(cut + 1), 2 * ID_BYTES);
  if (!bytes || publicId.length - cut - 1 !== base62Length(2 * ID_BYTES)) return null;
  return { kind: publicId.slice(0, cut), resourceId: RESOURCE_PREFIX + encodeBase62(bytes.slice(0, ID_BYTES)) };
}

export interface PublicAddressRow {
  public_id: string;
  reason: string;
  disabled_at: number;
}

export async function findDisabledPublicAddress(db: D1Database, publicId: string): Promise<PublicAddressRow | null> {
  return db
    .prepare("SELECT public_id, reason, disabled_at FROM disabled_public_addresses WHERE public_id = ?")
    .bind(publicId)
    .first<PublicAddressRow>();
}

/** Idempotent: disabling again updates the reason and keeps the first time it was disabled. */
export async function disablePublicAddress(
  db: D1Database,
  publicId: string,
  reason: string,
  now: number,
): Promise<PublicAddressRow> {
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

/**
 * Tells the resource serving `publicId` (if one does) that the operator disabled or enabled it,
 * after the D1 list is written: the public router reads only the resource. Throws when the
 * resource cannot be told, so the operator's call fails and is retried (both writes are idempotent).
 */
export async function mirrorDisabled(env: Env, publicId: string, disabled: boolean): Promise<void> {
  const resourceId =
    parsePublicId(publicId)?.resourceId ??
    (
      await env.DB.prepare("SELECT id FROM resources WHERE public_id = ? AND state = 'active'")
        .bind(publicId)
        .first<{ id: string }>()
    )?.id;
  if (resourceId) unwrap(await resourceStub(env, resourceId).setPublicDisabled({ publicId, disabled }));
  forgetAddress(publicId);
}

/** `{base}/p/{public_id}/…` → public_id, or null when the URL is not below the public base. */
export function publicIdOf(url: URL, publicBase: string, pattern: RegExp): string | null {
  const base = new URL(publicBase);
  const prefix = `${base.pathname.replace(/\/+$/, "")}/p/`;
  if (url.origin !== base.origin || !url.pathname.startsWith(prefix)) return null;
  const id = url.pathname.slice(prefix.length).split("/")[0] ?? "";
  return pattern.test(id) ? id : null;
}

/** Where public addresses live: PUBLIC_BASE_URL, else the API's own base (docs/api.md#public-addresses). */
export function publicBaseUrl(c: Context<AppEnv>): string {
  return c.env.PUBLIC_BASE_URL || serviceUrls(c).baseUrl;
}

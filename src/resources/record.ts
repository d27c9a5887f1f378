/** Turns a Durable Object's record into the public one, and answers for resources that are gone. */
import type { Context } from "hono";
import { isoOrNull } from "../time";
import type { AppEnv } from "../env";
import type { RecordCore } from "../rpc/resource";
import { AppError, unwrap, type Result } from "../http/errors";
import { digestsEqual } from "../auth/ids";
import { microToUsd } from "../money/amounts";
import { findResourceIndex } from "../kind/index-table";
import { serviceUrls } from "../http/urls";
import { publicBaseUrl } from "./public-addresses";

export function publicRecord(c: Context<AppEnv>, core: RecordCore) {
  const { charged_micro, public_id, ...rest } = core;
  return {
    ...rest,
    charged_usd: microToUsd(charged_micro),
    urls: {
      self: `${serviceUrls(c).baseUrl}/v1/resources/${core.id}`,
      public: public_id ? `${publicBaseUrl(c)}/p/${public_id}` : null,
    },
  };
}

/**
 * Unwraps a ResourceObject answer. When the resource itself is missing (never
 * created or already ended) the D1 tombstone tells which, so an ended resource
 * answers 410 with its final state for 30 days (to its token holder) and 404
 * after. Other "not found"s (a vault key) cost no D1 read.
 */
export async function resourceAnswer<T>(
  c: Context<AppEnv>,
  id: string,
  mgmtHash: string,
  result: Result<T>,
): Promise<T> {
  if (result.ok || !result.error.resourceMissing) return unwrap(result);
  const row = await findResourceIndex(c.env.DB, id);
  if (!row || row.state === "active" || !digestsEqual(row.mgmt_hash, mgmtHash)) return unwrap(result);
  const code = row.state === "expired" ? "resource_expired" : "resource_cancelled";
  throw new AppError(
    code,
    `This resource was ${row.state} at ${new Date(row.ended_at ?? row.expires_at).toISOString()}; its data is gone.`,
    {
      extra: {
        resource: {
          id: row.id,
          kind: row.kind,
          state: row.state,
          label: row.label,
          created_at: new Date(row.created_at).toISOString(),
          expires_at: new Date(row.expires_at).toISOString(),
          ended_at: isoOrNull(row.ended_at),
        },
      },
    },
  );
}

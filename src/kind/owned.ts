/**
 * One resource naming another of its owner's (a dead-man switch's notify resource, a link's
 * blob): the create body gives the other's management token, which proves the caller holds it;
 * only the other's id is kept.
 */
import { digestsEqual } from "../auth/ids";
import { hashToken, parseManagementToken } from "../auth/tokens";
import type { Env } from "../env";
import { AppError } from "../http/errors";
import { findResourceIndex } from "./index-table";

/**
 * Checks at create that `token` is the management token of an active resource of one of `kinds`; answers its id (a 422
 * naming `field` otherwise).
 */
export async function checkOwnedResource(env: Env, token: string, kinds: string[], field: string): Promise<string> {
  const what = `the management token of an active ${kinds.join(" or ")} resource`;
  const id = parseManagementToken(token)?.resourceId;
  const row = id ? await findResourceIndex(env.DB, id) : null;
  if (!row || !kinds.includes(row.kind) || row.state !== "active" || !digestsEqual(row.mgmt_hash, hashToken(token))) {
    throw new AppError("validation_failed", `${field}: not ${what}.`, {
      errors: [{ path: field, message: `not ${what}` }],
    });
  }
  return row.id;
}

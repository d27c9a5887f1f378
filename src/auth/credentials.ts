/** Reads credentials from a request. A malformed or foreign token is a 401 before any call is made. */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import { AppError } from "../http/errors";
import { hashToken, parseCreditToken, parseManagementToken } from "./tokens";
import { looksLikeJwt, verifyAccessToken } from "./access-tokens";
import { serviceUrls } from "../http/urls";

export interface CreditCredential {
  accountId: string;
  tokenId: string;
  /** SHA-256 of the presented credit token; null when a verified access token stood in for it. */
  tokenHash: string | null;
}

export interface ManagementCredential {
  resourceId: string;
  tokenHash: string;
}

export function bearer(c: Context<AppEnv>): string | null {
  const header = c.req.header("Authorization");
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw new AppError("unauthorized", "The Authorization header must be `Bearer <token>`.");
  return match[1];
}

/** The bearer credit credential a route cannot do without (balance, sub-tokens, receipts). */
export async function requireCredit(c: Context<AppEnv>): Promise<CreditCredential> {
  const token = bearer(c);
  if (!token) throw new AppError("unauthorized", "Send a credit token (zv_…) or an access token as the bearer credential.");
  return creditCredential(c, token);
}

/** A credit token, or an OAuth access token standing for one (it charges that credit token). */
export async function creditCredential(c: Context<AppEnv>, token: string): Promise<CreditCredential> {
  if (looksLikeJwt(token)) {
    const tokenId = await verifyAccessToken(c.env, serviceUrls(c), token);
    return { accountId: tokenId.split(".")[0]!, tokenId, tokenHash: null };
  }
  const parts = parseCreditToken(token);
  if (!parts) throw new AppError("unauthorized", "This is not a valid credit token (zv_…) or access token: check for a typo.");
  return { ...parts, tokenHash: hashToken(token) };
}

export function managementCredential(c: Context<AppEnv>, resourceId: string): ManagementCredential {
  const token = bearer(c);
  if (!token) throw new AppError("unauthorized", "This operation needs the resource's management token (zvm_…) as a bearer credential.");
  const parts = parseManagementToken(token);
  if (!parts) throw new AppError("unauthorized", "This is not a valid management token (zvm_…): check for a typo.");
  if (parts.resourceId !== resourceId) throw new AppError("forbidden", "This management token belongs to another resource.");
  return { resourceId, tokenHash: hashToken(token) };
}

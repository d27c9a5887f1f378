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
  if (!token)
    throw new AppError(
      "unauthorized",
      "Send a credit token (zv_…) or an access token as " + "`Authorization: Bearer …`.",
    );
  return creditCredential(c, token);
}

/**
 * What kind of token a string looks like, by its prefix alone (checksum aside): a caller who sent the
 * right token to the wrong place is told where each goes, rather than to look for a typo.
 */
function tokenKind(token: string): "credit" | "management" | "access" | null {
  if (token.startsWith("zvm_")) return "management";
  if (token.startsWith("zv_")) return "credit";
  return looksLikeJwt(token) ? "access" : null;
}

/**
 * A credit token, or an OAuth access token standing for one (it charges that credit token).
 * `from` says where it came from, so a management token sent there is told where it belongs.
 */
export async function creditCredential(
  c: Context<AppEnv>,
  token: string,
  from: "bearer" | "x-credit-token" = "bearer",
): Promise<CreditCredential> {
  if (looksLikeJwt(token)) {
    const tokenId = await verifyAccessToken(c.env, serviceUrls(c), token);
    return { accountId: tokenId.split(".")[0]!, tokenId, tokenHash: null };
  }
  const parts = parseCreditToken(token);
  if (parts) return { ...parts, tokenHash: hashToken(token) };
  if (tokenKind(token) === "management") {
    throw new AppError(
      "unauthorized",
      from === "x-credit-token"
        ? "X-CREDIT-TOKEN holds a management token (zvm_…); send it in `Authorization: Bearer zvm_…`, and a " +
            "credit token (zv_…) in X-CREDIT-TOKEN to pay."
        : "This is a management token (zvm_…); this route takes a credit token (zv_…) or an access token in " +
            "`Authorization: Bearer …`. A management token authorizes calls on its own resource, under " +
            "/v1/resources/{id} and /v1/{kind}/{id}/….",
    );
  }
  const where = from === "x-credit-token" ? "X-CREDIT-TOKEN" : "The bearer token";
  throw new AppError(
    "unauthorized",
    `${where} is not a valid credit token (zv_…) or access token: check for a typo (a token is copied ` +
      `whole, checksum included).`,
  );
}

export function managementCredential(c: Context<AppEnv>, resourceId: string): ManagementCredential {
  const token = bearer(c);
  if (!token)
    throw new AppError(
      "unauthorized",
      "This operation needs the resource's management token (zvm_…) in `Authorization: Bearer zvm_…`; a " +
        "credit token (zv_…) pays in X-CREDIT-TOKEN.",
    );
  const parts = parseManagementToken(token);
  if (!parts) {
    const kind = tokenKind(token);
    const credit = "This is a credit token (zv_…)";
    const sent = kind === "credit" ? credit : kind === "access" ? "This is an access token (JWT)" : null;
    if (sent) {
      throw new AppError(
        "unauthorized",
        `${sent}; this route takes the resource's management token (zvm_…, returned once when it was ` +
          `created) in Authorization, and a credit token or access token in X-CREDIT-TOKEN.`,
      );
    }
    throw new AppError(
      "unauthorized",
      "This is not a valid management token (zvm_…): check for a typo (a token is copied whole, checksum included).",
    );
  }
  if (parts.resourceId !== resourceId) {
    throw new AppError(
      "forbidden",
      `This management token is ${parts.resourceId}'s, not ${resourceId}'s: use the token returned when ` +
        `${resourceId} was created.`,
    );
  }
  return { resourceId, tokenHash: hashToken(token) };
}

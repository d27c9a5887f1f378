/**
 * What a delivery row keeps of its request's body (deliveries.ts): the text as it is, sealed when it is sensitive,
 * or the whole request sealed when its target is a secret.
 */
import type { Env } from "../../src/env";
import type { OutgoingRequest } from "../../src/kind/kind";
import { sealing } from "../../src/auth/sealing-loader";
import { sealRequest } from "../../src/delivery/secret-requests";

/** The row's body column: null for no body or a stored one (R2), else text, sealed as the row's `sealed` says. */
export function storedText(env: Env, request: OutgoingRequest): string | null {
  const body = request.body;
  const secret = request.secret;
  if (secret && typeof body !== "string" && body !== null)
    throw new Error("a request with a secret target carries a text body");
  // sealed: 1 the body (a released secret), 2 the whole request (url, headers, body), shown by its redacted URL.
  return secret
    ? sealRequest(env, {
        url: request.url,
        headers: request.headers,
        body: body as string | null,
        okWhen: secret.okWhen,
        aws: secret.aws,
      })
    : typeof body === "string"
      ? request.sensitive
        ? sealing().seal(env, body)
        : body
      : null;
}

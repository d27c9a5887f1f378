/**
 * Every error code of the service (docs/api.md#errors), the table each problem+json answer, error page and OpenAPI
 * response comes from: [status, title, what it means, what to do]. The last two are the page its `type`
 * URI opens (site/error-pages.ts), for a person and for an agent: one line each, general to the code;
 * the `detail` of each answer says what was wrong with that request.
 */
export const ERROR_CODES = {
  invalid_request: [
    400,
    "Invalid request",
    "The request could not be read: malformed JSON, a malformed header, or a parameter of the wrong shape.",
    "Correct what `detail` names and send the request again.",
  ],
  unauthorized: [
    401,
    "Unauthorized",
    "The credential is missing, malformed, unknown, or not the kind of token this route takes.",
    "Send the token `detail` names: a credit token (`zv_…`) or an access token as `Authorization: Bearer` " +
      "to create resources and use credits; a resource's management token (`zvm_…`) in `Authorization` to " +
      "call that resource, with a credit token in `X-CREDIT-TOKEN` to pay.",
  ],
  payment_required: [
    402,
    "Payment required",
    "This call costs money and came without payment.",
    "Send a credit token (`Authorization: Bearer zv_…` to create; `X-CREDIT-TOKEN` beside a management " +
      "token), or sign the x402 terms in the answer and repeat the call with `PAYMENT-SIGNATURE` or " +
      "`X-PAYMENT`. Credit tokens are bought at `POST /v1/credits`.",
  ],
  insufficient_balance: [
    402,
    "Insufficient balance",
    "The credit token's balance does not cover this call; nothing was charged.",
    "Top the token up (`POST /v1/credits` with the token as the bearer, paid with x402), or pay this call with x402.",
  ],
  cap_exceeded: [
    402,
    "Spend cap exceeded",
    "This sub-token has spent the cap it was issued with; nothing was charged.",
    "Pay with another token, or issue a new sub-token with a higher cap from the root token (`POST " +
      "/v1/credits/subtokens`).",
  ],
  payment_invalid: [
    402,
    "Payment invalid",
    "The x402 payment does not match this call's terms (amount, payee, asset, network) or its signature or " +
      "validity window is wrong.",
    "Sign the exact terms of a fresh 402 of this call and repeat the call with the new payment.",
  ],
  forbidden: [
    403,
    "Forbidden",
    "The credential is valid but not for this: another resource's management token, or a scope it lacks.",
    "Use the management token returned when this resource was created, or a credential with the scope `detail` names.",
  ],
  token_operation_not_allowed: [
    403,
    "Operation not allowed for this token",
    "The management token is a narrowed one, and this operation is not among those it was granted (extend, " +
      "export and cancel must be granted by name).",
    "Call one of the operations in the answer's `operations`, or ask the holder of a wider token for one " +
      "that grants this (`POST /v1/resources/{id}/tokens`).",
  ],
  token_key_not_allowed: [
    403,
    "Key outside this token's prefixes",
    "The management token is narrowed to key prefixes, and this call reaches a key (or lists keys) outside " +
      "them, or reaches keys it cannot name.",
    "Use keys under the prefixes in the answer's `key_prefixes`, or a token narrowed to the prefix you need.",
  ],
  token_calls_spent: [
    403,
    "Token's paid calls spent",
    "The management token (or one it was derived from) has made as many paid calls as it was granted; " +
      "nothing was charged.",
    "Ask the holder of a wider token for a new one (`POST /v1/resources/{id}/tokens`).",
  ],
  token_expired: [
    403,
    "Token expired",
    "The management token is a narrowed one whose own expiry has passed (the resource itself may live on).",
    "Ask the holder of a wider token for a new one (`POST /v1/resources/{id}/tokens`).",
  ],
  token_revoked: [
    403,
    "Token revoked",
    "The management token was revoked, itself or a token it was derived from.",
    "Ask the holder of a wider token for a new one (`POST /v1/resources/{id}/tokens`).",
  ],
  token_widening: [
    403,
    "Token would be wider than its parent",
    "A token made from a narrowed token asked for more than that token has: an operation, a later expiry, " +
      "more paid calls, or a key prefix outside its own.",
    "Ask only for what `errors[]` shows is within the parent token, or make the token from a wider one.",
  ],
  not_found: [
    404,
    "Not found",
    "No route has this path, or no resource with this id is visible to this token.",
    "Check the path against `/openapi.json` (a 404 names the known paths near a mistyped one) and the id " +
      "against the create answer.",
  ],
  method_not_allowed: [
    405,
    "Method not allowed",
    "The path exists, but not with this method.",
    "Use one of the methods in the `Allow` header of the answer.",
  ],
  conflict: [
    409,
    "Conflict",
    "The request conflicts with the resource's current state (a version, a lock, or a state that does not allow it).",
    "Read the resource's current state, then send a request that fits it, as `detail` says.",
  ],
  payment_replayed: [
    409,
    "Payment replayed",
    "This x402 payment was already used: each signed authorization pays for one call.",
    "Sign a new authorization (a new nonce) for this call.",
  ],
  idempotency_in_flight: [
    409,
    "Idempotent request in flight",
    "A request with this `Idempotency-Key` is still running.",
    "Wait a moment and retry with the same key: the retry gets the first request's answer.",
  ],
  resource_expired: [
    410,
    "Resource expired",
    "The resource's TTL ran out and its data is gone.",
    "Create a new resource; extend one before it expires with `POST /v1/resources/{id}/extend`.",
  ],
  resource_cancelled: [
    410,
    "Resource cancelled",
    "The resource was cancelled and its data is gone.",
    "Create a new resource if one is still needed.",
  ],
  payload_too_large: [
    413,
    "Payload too large",
    "The body is larger than this route takes.",
    "Send a smaller body: JSON up to 1 MiB unless the kind's limits (in `/v1/prices`) say more; large data " +
      "belongs in a blobs or objects resource.",
  ],
  unsupported_media_type: [
    415,
    "Unsupported media type",
    "The body's `Content-Type` is not one this route reads.",
    "Send JSON with `Content-Type: application/json`, or the type the operation documents for bytes.",
  ],
  range_not_satisfiable: [
    416,
    "Range not satisfiable",
    "The `Range` asked for lies outside the stored bytes.",
    "Ask for a range within the size (the answer's `Content-Range: bytes */size`), or drop the `Range` header.",
  ],
  validation_failed: [
    422,
    "Validation failed",
    "The input was read, but a field in it is not valid.",
    "Correct each field listed in `errors[]` (its `path` and `message`) and send the request again.",
  ],
  idempotency_mismatch: [
    422,
    "Idempotency key reused with another request",
    "This `Idempotency-Key` was first used with a different request.",
    "Use a new key for a new request; reuse a key only to retry the identical request.",
  ],
  rate_limited: [
    429,
    "Rate limited",
    "Too many requests from this credential or address in the current minute.",
    "Wait the seconds in `Retry-After`, then retry.",
  ],
  storage_full: [
    507,
    "Insufficient storage",
    "The resource has no room for what arrived: it reached its size or item limit.",
    "Delete or consume what it holds, as `detail` says, or use a new resource.",
  ],
  internal_error: [
    500,
    "Internal error",
    "Something failed on the service's side; it was logged under the answer's `request_id`. The call was not charged.",
    "Retry after a moment; if it keeps failing, report it with the `request_id`.",
  ],
  upstream_failed: [
    502,
    "Upstream failed",
    "A service this call reaches (a target URL, a provider) failed or answered badly.",
    "Check the target `detail` names, then retry.",
  ],
  settlement_failed: [
    502,
    "Settlement failed",
    "The x402 payment could not be settled on chain in time.",
    "If the answer carries a `transaction`, it may still confirm: check it before paying again; otherwise " +
      "retry the call.",
  ],
  engine_unavailable: [
    503,
    "Engine unavailable",
    "The engine behind this call (PDF rendering, OCR, office conversion, the egress proxy) is not " +
      "configured or not answering; nothing was charged.",
    "Retry later; if it persists, the service's operator must configure the engine `detail` names.",
  ],
  service_misconfigured: [
    503,
    "Service misconfigured",
    "This deployment lacks a setting the route needs, so it takes no money and signs nothing.",
    "Nothing in the request can fix it: retry later, or tell the service's operator which setting `detail` names.",
  ],
  engine_timeout: [
    504,
    "Engine timed out",
    "The engine behind this call did not finish in time; nothing was charged.",
    "Retry with a smaller input, or later.",
  ],
} as const satisfies Record<string, readonly [status: number, title: string, meaning: string, whatToDo: string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Security requirements of the routes; the schemes themselves are registered in document.ts. */
type Security = Record<string, string[]>[];

/** Creates: a credit bearer or a per-call x402 payment. */
export const PAID: Security = [{ credit: [] }, { x402: [] }, { x402v2: [] }];
/** Paid operations on a resource: its management token, paid by X-CREDIT-TOKEN or x402. */
export const MANAGED_PAID: Security = [
  { management: [], creditHeader: [] },
  { management: [], x402: [] },
  { management: [], x402v2: [] },
];
export const MANAGED: Security = [{ management: [] }];
export const CREDIT: Security = [{ credit: [] }];
/** Credit purchases: x402 only; with a credit bearer as well, a top-up. */
export const PURCHASE: Security = [{ x402: [] }, { x402v2: [] }, { credit: [], x402: [] }, { credit: [], x402v2: [] }];

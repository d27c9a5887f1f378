/** Arguments of the ResourceObject's RPC methods, shared with the worker routes that call them. */
import type { Payer } from "../../src/money/payment";
import type { Json, JsonObject } from "../../src/json";
import type { PublicRequest } from "../../src/resources/kind";

export interface CreateInput {
  id: string;
  kind: string;
  owner: string;
  mgmtHash: string;
  label: string | null;
  notifyUrl: string | null;
  /** The whsec_ secret for notify_url, sealed; null without notify_url. */
  sealedSecret: string | null;
  /** Its public address id, for kinds with one (API.md §12). */
  publicId: string | null;
  /** The API's base URL (BASE_URL, or the request's origin), for links the resource hands out. */
  baseUrl: string;
  /** The kind's validated config, as JSON text (stored as is). */
  configJson: string;
  /** What the kind's sealCreate set aside for init (JSON text; "null" without). */
  sealedJson: string;
  ttlSeconds: number;
  priceMicro: number;
  payer: Payer;
  requestId: string;
}

export interface OpInput {
  mgmtHash: string;
  kind: string;
  op: string;
  input: Json;
  priceMicro: number;
  payer: Payer;
  requestId: string;
  /** Only answer what the operation would give, charging and changing nothing (a download looks up its object first). */
  peek?: boolean;
  /** The operation must answer these fields with these values, else it is refused (409) and rolled back, uncharged. */
  expect?: JsonObject;
}

export interface PublicInput {
  publicId: string;
  request: PublicRequest;
}

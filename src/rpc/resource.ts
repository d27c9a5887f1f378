/**
 * The ResourceObject's RPC surface, as the worker and the queue consumer see it: the methods
 * and the data they take and give. Declared here, in src/, and implemented by
 * durable-objects/ResourceObject.ts, so the worker's code never imports the object's.
 */
import type { Result } from "../http/errors";
import type { ResourceFaults } from "./resource-faults";
import type { Json, JsonObject } from "../json";
import type { Payer } from "../money/payment";
import type { PublicAnswer, PublicRequest } from "../kind/public-face";
import type { AttemptResult } from "../delivery/messages";
import type { SandboxStep } from "./sandbox";

export type ResourceState = "active" | "expired" | "cancelled";

/** The one row describing a resource inside its object (and, in part, its D1 index row). */
export type MetaRow = {
  id: string;
  kind: string;
  owner: string;
  mgmt_hash: string;
  label: string | null;
  notify_url: string | null;
  config: string;
  created_at: number;
  expires_at: number;
  charged: number;
  signing_secret: string | null;
  notices_sent: number;
  public_id: string | null;
  /** 1 while the operator has its public address disabled (mirrored from D1's list). */
  public_disabled: number;
  base_url: string;
  ended: Exclude<ResourceState, "active"> | null;
};

/** The record of docs/api.md#the-resource-record without `urls`, which the worker adds from the request's origin. */
export interface RecordCore {
  id: string;
  kind: string;
  family: string;
  state: ResourceState;
  label: string | null;
  created_at: string;
  expires_at: string;
  charged_micro: number;
  notify_url: string | null;
  public_id: string | null;
  config: Json;
  usage: JsonObject;
  status: JsonObject | null;
}

export interface CreateInput {
  id: string;
  kind: string;
  owner: string;
  mgmtHash: string;
  label: string | null;
  notifyUrl: string | null;
  /** The whsec_ secret for notify_url, sealed; null without notify_url. */
  sealedSecret: string | null;
  /** Its public address id, for kinds with one (docs/api.md#public-addresses). */
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
  /**
   * Only answer what the operation would give, charging and changing nothing (a download looks up its object first).
   */
  peek?: boolean;
  /** The operation must answer these fields with these values, else it is refused (409) and rolled back, uncharged. */
  expect?: JsonObject;
  /**
   * This request under its Idempotency-Key, derived from the key and the request: `key` names it, `secret` seals its
   * answer. The object keeps the answer with the work, and a retry whose first answer was lost gets it again,
   * uncharged (resource/kept-answers.ts).
   */
  replay?: Replay;
}

export interface Replay {
  key: string;
  /** 32 bytes: only a retry of the same request under the same key has them, so only it can read the answer. */
  secret: Uint8Array;
}

export interface PublicSettled {
  publicId: string;
  report: string;
  status: number;
  durationMs: number;
}

/** A message one resource relays to another through the delivery pipeline (src/delivery/relay.ts). */
export interface RelayInput {
  /** The relaying delivery's id: the same on every attempt, so the receiver takes it once. */
  deliveryId: string;
  /** The resource that sent it. */
  from: string;
  body: string;
}

export interface PublicInput {
  publicId: string;
  request: PublicRequest;
}

/** The key under which the worker is about to store a large body for a request to the address `publicId`. */
export interface PublicBodyIntent {
  publicId: string;
  key: string;
}

/** What the queue consumer reports after an attempt, or the dead-letter queue at the end. */
export interface DeliveryReport {
  deliveryId: string;
  /** The message's send number (WebhookMessage.send); null for messages of older code. */
  send: number | null;
  /** The attempt just made; null when the dead-letter queue reports the end. */
  attempt: (AttemptResult & { at: number }) | null;
  /** Set when no more attempts follow. */
  final: "delivered" | "aborted" | "dead" | null;
  /** When the queue tries again, for a failed attempt that is not final. */
  retryInSeconds: number | null;
}

export interface ResourceApi {
  create(input: CreateInput): Promise<Result<RecordCore>>;
  status(mgmtHash: string): Promise<Result<RecordCore>>;
  /** The x402 payment of the create `requestId` settled: its creation is crossed off (CreateInput.awaitsSettlement). */
  settledCreate(requestId: string): Promise<Result<null>>;
  /** Moves expires_at by `ttlSeconds`, charging `priceMicro` (the worker priced it from the registry). */
  extend(input: {
    mgmtHash: string;
    ttlSeconds: number;
    priceMicro: number;
    payer: Payer;
    requestId: string;
  }): Promise<Result<RecordCore>>;
  exportAll(mgmtHash: string): Promise<Result<{ resource: RecordCore; data: Json }>>;
  cancel(mgmtHash: string): Promise<Result<RecordCore>>;
  /** `body`: the raw request bytes of a rawBody operation, streamed through. */
  op(input: OpInput, body?: ReadableStream<Uint8Array> | null): Promise<Result<Json>>;
  /** Before a large body is stored for a request to the address: the alarm deletes it if no request commits it. */
  intendPublicBody(input: PublicBodyIntent): Promise<Result<null>>;
  /** A request to the resource's public address: free, no credentials. */
  publicRequest(input: PublicInput): Promise<Result<PublicAnswer>>;
  /** How an upstream the face named a `report` for answered (public-face.ts `settled`). */
  publicSettled(input: PublicSettled): Promise<Result<null>>;
  /** The operator disabled (or enabled) the address `publicId`; answers whether this resource has it. */
  setPublicDisabled(input: { publicId: string; disabled: boolean }): Promise<Result<boolean>>;
  /** The account asks for its held money back. */
  flushBilling(): Promise<Result<null>>;
  /** A message relayed by another resource's delivery (a dead-man switch's alert to a notify resource). */
  relay(input: RelayInput): Promise<Result<null>>;
  /**
   * The R2 object this resource shares with another of its owner's (a link serving a blob): its kind's `shared` step;
   * null when it holds none.
   */
  sharedObject(): Promise<Result<{ key: string } | null>>;
  /**
   * Makes bytes another of its owner's resources wrote below this one's R2 prefix its content (a transfer into an
   * objects resource): its kind's `adopt` step.
   */
  adoptObject(input: AdoptedObject): Promise<Result<null>>;
  /** Answers whether the reporting message should go on retrying. */
  recordDelivery(report: DeliveryReport): Promise<boolean>;
  listDeliveries(input: {
    mgmtHash: string;
    kind: string;
    limit: number;
    cursor: string | null;
  }): Promise<Result<{ items: Json[]; next_cursor: string | null }>>;
  retryDelivery(input: { mgmtHash: string; kind: string; deliveryId: string }): Promise<Result<Json>>;
  /** The operator's retry of a dead delivery: no management token, the resource must still be active. */
  operatorRetryDelivery(deliveryId: string): Promise<Result<Json>>;
  /** A narrower management token for this resource, made with `mgmtHash` (docs/api.md#narrowed-management-tokens). */
  mintToken(input: MintTokenInput): Promise<Result<TokenView>>;
  /** The narrowed tokens `mgmtHash` may see: all of them for the resource's own token, else those made from it. */
  listTokens(input: {
    mgmtHash: string;
    limit: number;
    cursor: string | null;
  }): Promise<Result<{ items: TokenView[]; next_cursor: string | null }>>;
  /** Revokes a narrowed token and every token made from it; answers the ids revoked. */
  revokeToken(input: { mgmtHash: string; tokenId: string }): Promise<Result<{ token_id: string; revoked: string[] }>>;
  /**
   * Its sandbox moves the clock of a sandbox's resource to `offsetMs` and runs what fell due (docs/api.md#sandboxes).
   */
  sandboxStep(input: { sandboxId: string; offsetMs: number; maxRuns: number }): Promise<SandboxStep>;
  /** Its sandbox ended: the resource ends with it. False when it is not that sandbox's, or gone. */
  sandboxEnd(sandboxId: string): Promise<boolean>;
  /** Test only (ENVIRONMENT=test): moves the resource's clock ahead, running what falls due; answers its now. */
  advanceClock(ms: number, runDue?: boolean): Promise<number>;
  /** Test only (ENVIRONMENT=test). */
  injectFaults(faults: ResourceFaults): void;
}

/**
 * A narrowed management token as its resource lists it (docs/api.md#narrowed-management-tokens); never the token
 * itself.
 */
export interface TokenView {
  token_id: string;
  parent_token_id: string | null;
  label: string | null;
  operations: string[] | null;
  expires_at: string | null;
  max_paid_calls: number | null;
  paid_calls: number;
  key_prefixes: string[] | null;
  created_at: string;
  revoked_at: string | null;
}

/**
 * The limits a new narrowed token asks for, as validated (`expiresAt` in epoch ms); each absent one is its parent's.
 */
export interface AskedLimits {
  operations?: string[];
  expiresAt?: number;
  maxPaidCalls?: number;
  keyPrefixes?: string[];
}

export interface MintTokenInput {
  /** The token making it: the resource's own, or a narrowed one. */
  mgmtHash: string;
  tokenId: string;
  /** The new token's SHA-256: the token itself is shown to the caller once and never reaches the object. */
  tokenHash: string;
  label: string | null;
  asked: AskedLimits;
}

/** Bytes landed in R2 below a resource's prefix by another of its owner's resources, offered as its content. */
export interface AdoptedObject {
  key: string;
  size: number;
  sha256: string;
  contentType: string;
  /** Where they came from, for the record (a transfer's id). */
  source: string;
}

/**
 * What a kind's code sees of its resource: the store its synchronous steps (an operation's
 * `run`, a timer's `fire`, a face's `handle`) work in, inside the resource's transaction; the
 * context of its asynchronous steps, outside it; and the requests it sends. Re-exported by
 * kind.ts, the contract kinds import from.
 */
import type { Env } from "../env";
import type { Json } from "../json";
import type { SecretTarget } from "../delivery/secret-requests";

/**
 * A body kept in R2 rather than in the delivery row and the queue message (anything past a
 * few KiB, binary, up to the bucket's limits): an object below the resource's prefix that the
 * kind wrote for this purpose and hands over with the send. Every delivery naming it shares
 * the one object, which the pipeline deletes once none of them can be sent again.
 */
export interface StoredBody {
  key: string;
}

/**
 * An HTTP request a kind sends out (a wakeup's call, a schedule's tick): signed and retried by the delivery pipeline.
 */
export interface OutgoingRequest {
  url: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers: Record<string, string>;
  /** Text (at most MAX_INLINE_BODY_BYTES, src/delivery/outbound.ts) or an R2 object. */
  body: string | StoredBody | null;
  /** What this request is, for the attempt log (e.g. "wakeup.fired"). */
  eventType: string;
  /** Its `webhook-id` (e.g. the id inside an event's envelope); by default a new one. A known id is sent once. */
  id?: string;
  /** The body is a secret (a released payload): the attempt log keeps it sealed and never shows it. */
  sensitive?: boolean;
  /**
   * The URL and headers carry credentials too (a notify channel's token): the whole request is kept and
   * queued sealed (src/delivery/secret-requests.ts), the log shows `shownUrl`, and the body must be text.
   */
  secret?: SecretTarget;
  /**
   * Its own retry schedule: seconds before each retry (at most MAX_ATTEMPTS - 1 of them, each within
   * MAX_RETRY_DELAY_SECONDS, src/delivery/schedule.ts); it is dead once they are spent. Default: RETRY_DELAYS_SECONDS.
   */
  retryDelays?: number[];
}

/** What an engine sees inside its ResourceObject. */
export interface EngineStore {
  readonly resourceId: string;
  readonly sql: SqlStorage;
  readonly env: Env;
  /** Current time in Unix ms (one reading per call, so an operation sees one instant). */
  readonly now: number;
  /** When the resource was created, and when it expires (as of now), Unix ms. */
  readonly createdAt: number;
  readonly expiresAt: number;
  /**
   * The owner's label for the resource (null without one): what pages and messages for people call it, rather than its
   * id.
   */
  readonly label: string | null;
  /** Where lifecycle events go (the create's notify_url), for kinds that send their own events there too. */
  readonly notifyUrl: string | null;
  /** The resource's public address `{PUBLIC_BASE_URL}/p/{public_id}`, for kinds with one (null otherwise). */
  readonly publicUrl: string | null;
  /**
   * Sends a request: recorded in the engine's transaction (a transactional outbox, so a
   * rolled-back operation sends nothing and a committed one is sent even if the process
   * dies next), put on the queue once it has committed. Returns its delivery id.
   */
  send(request: OutgoingRequest): string;
  /**
   * The resource's outbound deliveries, as its attempt log shows them (the Delivery schema,
   * src/delivery/schemas.ts): one by id, or a page of those with the given statuses (all when none).
   */
  readonly deliveries: {
    get(id: string): Json | null;
    page(statuses: string[], limit: number, cursor: string | null): { items: Json[]; next_cursor: string | null };
    /** How many there are in each status (statuses with none are absent). */
    counts(): Record<string, number>;
    /**
     * Gives up on one not yet settled (what it carries was taken another way): settled as aborted, its
     * retries stop (an attempt under way may still be made). Answers whether it was still open.
     */
    cancel(id: string): boolean;
  };
  /**
   * Deletes R2 objects (full keys, below `${resourceId}/`) once the transaction has committed; recorded with it, so the
   * alarm finishes a delete the process did not.
   */
  dropObjects(keys: string[]): void;
  /**
   * A signed URL that downloads the R2 object `key` (below `${resourceId}/`) without credentials, valid until the
   * resource ends (docs/api.md#managing-a-resource: export gives large bodies this way). Range requests work.
   */
  downloadUrl(key: string): string;
}

/**
 * What a kind's asynchronous step sees (signing, fetching, writing R2): it runs in the
 * resource's Durable Object after authorization and outside any transaction, before
 * the synchronous step that records its result. A failure there charges nothing.
 */
export interface PrepareContext {
  readonly resourceId: string;
  readonly env: Env;
  /** Unix ms when the step started. */
  readonly now: number;
  /** For reading the kind's tables only (e.g. the last snapshot's hash); writes belong to run/fire. */
  readonly sql: SqlStorage;
  /** When the resource expires, Unix ms (e.g. for R2 custom metadata). */
  readonly expiresAt: number;
  /** The API's base URL as the resource was created (an issuer, a link). */
  readonly baseUrl: string;
  /**
   * Throws (404, nothing charged) when the resource ended while the step awaited: its tables are
   * gone then. Call it before reading the kind's tables after an await, or before more costly work.
   */
  stillHere(): void;
}

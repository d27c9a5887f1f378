/**
 * Generated from the registry (src/resources/registry.ts) by `npm run manifests`: do not edit.
 * What the worker knows of each kind before it loads the kind's module (resources/kinds.ts): its name,
 * family and summary, the method and path of every route it has, with an operation's body limit, and how
 * to load it. test/node/kind-manifest.test.ts fails when this is out of date.
 */
import type { KindCard } from "../kind/kind";

export const KIND_CARDS: readonly KindCard[] = [
  {
    kind: "wakeups", family: "time",
    summary:
      "One HTTP call at a set time (at or delay_seconds), signed with Standard Webhooks, retried, with an attempt " +
      "log.",
    load: () => import("../kinds/time/wakeups").then((m) => m.wakeups),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "fire", method: "post", path: "/fire" },
      { name: "reschedule", method: "post", path: "/reschedule" },
    ],
  },
  {
    kind: "schedules", family: "time",
    summary:
      "A recurring HTTP call on a 5-field cron in an IANA time zone: start/end, pause/resume, run now, preview, " +
      "jitter, overlap policy, history.",
    load: () => import("../kinds/time/schedules").then((m) => m.schedules),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "next", method: "get", path: "/next" },
      { name: "history", method: "get", path: "/history" },
      { name: "pause", method: "post", path: "/pause" },
      { name: "resume", method: "post", path: "/resume" },
      { name: "run", method: "post", path: "/run" },
    ],
  },
  {
    kind: "deadman", family: "time",
    summary:
      "A job pings a public URL (/start, /fail, /{exit_code}) every period_seconds; past grace_seconds a run is " +
      "missed, and after alert_after_misses the switch goes down: alert (repeated every realert_seconds), recovery " +
      "event on the next success, and an optional sealed payload released once to successor_url.",
    load: () => import("../kinds/time/deadman").then((m) => m.deadman),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "ping", method: "post", path: "/ping" },
      { name: "pings", method: "get", path: "/pings" },
      { name: "set_payload", method: "post", path: "/payload" },
      { name: "clear_payload", method: "delete", path: "/payload" },
      { name: "pause", method: "post", path: "/pause" },
    ],
  },
  {
    kind: "delayed", family: "time",
    summary:
      "A channel to one target: post messages with delay_seconds or deliver_at and an optional dedup_id; list " +
      "pending, cancel one.",
    load: () => import("../kinds/time/delayed").then((m) => m.delayed),
    ownRoutes: [],
    ops: [
      { name: "publish", method: "post", path: "/messages" },
      { name: "messages", method: "get", path: "/messages" },
      { name: "cancel", method: "post", path: "/messages/cancel" },
    ],
  },
  {
    kind: "drips", family: "time",
    summary:
      "Enqueue many messages; they are released to one target at `rate` (count per period, sliding window) with at " +
      "most max_parallel in flight; pause, resume, release now, backlog listing.",
    load: () => import("../kinds/time/drips").then((m) => m.drips),
    ownRoutes: [],
    ops: [
      { name: "enqueue", method: "post", path: "/messages" },
      { name: "enqueue_batch", method: "post", path: "/messages/batch" },
      { name: "messages", method: "get", path: "/messages" },
      { name: "message", method: "get", path: "/message" },
      { name: "cancel", method: "post", path: "/messages/cancel" },
      { name: "purge", method: "post", path: "/messages/purge" },
      { name: "get", method: "get", path: "" },
      { name: "pause", method: "post", path: "/pause" },
      { name: "resume", method: "post", path: "/resume" },
      { name: "release", method: "post", path: "/release" },
      { name: "set_limits", method: "post", path: "/limits" },
    ],
  },
  {
    kind: "snapshots", family: "time",
    summary:
      "A URL fetched every interval_seconds or on a cron; each answer kept with status, headers, sha256 and size, " +
      "`changed` against the last good one, keep_last kept, an event on change; snapshot now, pause/resume.",
    load: () => import("../kinds/time/snapshots").then((m) => m.snapshots),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "list", method: "get", path: "/snapshots" },
      { name: "take", method: "post", path: "/snapshots" },
      { name: "read", method: "get", path: "/snapshot" },
      { name: "pause", method: "post", path: "/pause" },
      { name: "resume", method: "post", path: "/resume" },
    ],
  },
  {
    kind: "spread", family: "time",
    summary:
      "Members added by key each fire once per period at a stable hashed offset, so N members spread over the " +
      "period; list with slots, preview.",
    load: () => import("../kinds/time/spread").then((m) => m.spread),
    ownRoutes: [],
    ops: [
      { name: "add_member", method: "post", path: "/members" },
      { name: "members", method: "get", path: "/members" },
      { name: "remove_member", method: "post", path: "/members/remove" },
      { name: "next", method: "get", path: "/next" },
    ],
  },
  {
    kind: "debounce", family: "time",
    summary:
      "Events posted by the API or to the public URL, grouped by optional key; each key's window fires once, " +
      "quiet_seconds after its last event and never later than max_wait_seconds after its first, delivering the last " +
      "event or all of them (mode).",
    load: () => import("../kinds/time/debounce").then((m) => m.debounce),
    ownRoutes: [],
    ops: [
      { name: "post_event", method: "post", path: "/events" },
      { name: "get", method: "get", path: "" },
      { name: "windows", method: "get", path: "/windows" },
      { name: "window", method: "get", path: "/window" },
      { name: "flush", method: "post", path: "/flush" },
      { name: "cancel", method: "post", path: "/windows/cancel" },
      { name: "fired", method: "get", path: "/fired" },
    ],
  },
  {
    kind: "notary", family: "time",
    summary:
      "Stamps a SHA-256 (or data, hashed server-side) with an RFC 3161 time-stamp token that `openssl ts -verify` " +
      "accepts against GET /v1/tsa/certificate.pem; every stamp is kept in a hash-chained log.",
    load: () => import("../kinds/time/notary").then((m) => m.notary),
    ownRoutes: [{ method: "get", path: "/v1/tsa/certificate.pem" }, { method: "get", path: "/v1/tsa/certificate.der" }],
    ops: [
      { name: "stamp", method: "post", path: "/stamps" },
      { name: "stamps", method: "get", path: "/stamps" },
      { name: "get_stamp", method: "get", path: "/stamps/lookup" },
      { name: "find_stamps", method: "get", path: "/stamps/find" },
    ],
  },
  {
    kind: "attest", family: "time",
    summary:
      "The service fetches a URL for you and returns the content with a signed receipt (compact JWS over url, final " +
      "url, method, status, selected headers, body SHA-256, time) verifiable against /.well-known/jwks.json; the " +
      "bytes stay downloadable for the TTL. Up to 1000 fetches of at most 10485760 bytes, 1073741824 bytes in all.",
    load: () => import("../kinds/time/attest").then((m) => m.attest),
    ownRoutes: [],
    ops: [
      { name: "fetch", method: "post", path: "/fetches" },
      { name: "fetches", method: "get", path: "/fetches" },
      { name: "get_fetch", method: "get", path: "/fetch" },
    ],
  },
  {
    kind: "inboxes", family: "address",
    summary:
      "A public URL taking any method and path below it, bodies up to 10 MiB, each request kept byte-exact in " +
      "arrival order; pull with a cursor and long-poll, ack. Optional signature checks (Stripe, GitHub, Slack, " +
      "Standard Webhooks, Shopify, Twitch, Zoom). Receiving is free.",
    load: () => import("../kinds/address/inboxes").then((m) => m.inboxes),
    ownRoutes: [],
    ops: [
      { name: "pull", method: "get", path: "/items" },
      { name: "ack", method: "post", path: "/items/ack" },
      { name: "info", method: "get", path: "" },
    ],
  },
  {
    kind: "bins", family: "address",
    summary:
      "A public URL capturing every request at or below it whole (method, path, query, headers, raw body up to 10 " +
      "MiB, client address, timing), answered as you configure; list, fetch and download captures, or open the view " +
      "link. Capturing is free.",
    load: () => import("../kinds/address/bins").then((m) => m.bins),
    ownRoutes: [],
    ops: [
      { name: "list", method: "get", path: "/captures" },
      { name: "get_capture", method: "get", path: "/captures/{seq}" },
      { name: "clear", method: "delete", path: "/captures" },
      { name: "set_response", method: "put", path: "/response" },
      { name: "info", method: "get", path: "" },
    ],
  },
  {
    kind: "fanout", family: "address",
    summary:
      "One public URL, up to 20 destinations: each request goes to every destination whose filter (field equality or " +
      "JSONata) it passes, as its own signed, retried delivery; per-destination statistics; destinations added and " +
      "removed while live.",
    load: () => import("../kinds/address/fanout").then((m) => m.fanout),
    ownRoutes: [],
    ops: [
      { name: "list_destinations", method: "get", path: "/destinations" },
      { name: "add_destination", method: "post", path: "/destinations" },
      { name: "remove_destination", method: "delete", path: "/destinations/{destination_id}" },
      { name: "destination_sends", method: "get", path: "/destinations/{destination_id}/sends" },
      { name: "info", method: "get", path: "" },
    ],
  },
  {
    kind: "stable", family: "address",
    summary:
      "A permanent public URL forwarding to a target you change (`PUT …/target`): proxied (streaming both ways) or " +
      "redirected (307); while no target is set, requests are buffered and replayed to the next one in order, once " +
      "each.",
    load: () => import("../kinds/address/stable").then((m) => m.stable),
    ownRoutes: [],
    ops: [
      { name: "set_target", method: "put", path: "/target" },
      { name: "info", method: "get", path: "" },
      { name: "buffer", method: "get", path: "/buffer" },
      { name: "clear_buffer", method: "delete", path: "/buffer" },
    ],
  },
  {
    kind: "deliveries", family: "address",
    summary:
      "Submit an HTTP request (body up to 10 MiB): delivered signed, retried until a 2xx on the service's or your " +
      "schedule, dead letters listed and retried by hand, every attempt logged; an idempotency key sends once.",
    load: () => import("../kinds/address/deliveries").then((m) => m.deliveries),
    ownRoutes: [],
    ops: [
      { name: "submit", method: "post", path: "/requests", maxBodyBytes: 14243158 },
      { name: "get_delivery", method: "get", path: "/requests/{delivery_id}" },
      { name: "list", method: "get", path: "/requests" },
      { name: "info", method: "get", path: "" },
    ],
  },
  {
    kind: "transformers", family: "address",
    summary:
      "A public URL taking JSON, reshaped by a JSONata expression (headers too, optionally) and forwarded to your " +
      "target through the delivery pipeline; `test` runs it on a sample; a failing expression sends nothing and is " +
      "logged.",
    load: () => import("../kinds/address/transformers").then((m) => m.transformers),
    ownRoutes: [],
    ops: [
      { name: "test", method: "post", path: "/test" },
      { name: "set_expressions", method: "put", path: "/expressions" },
      { name: "log", method: "get", path: "/log" },
      { name: "info", method: "get", path: "" },
    ],
  },
  {
    kind: "handshakes", family: "address",
    summary:
      "A public URL answering providers' verification challenges (Slack, Meta/WhatsApp, Microsoft Graph, X CRC, " +
      "Zoom, Twitch, Dropbox) with sealed secrets; every other request is buffered like an inbox's. Receiving is " +
      "free.",
    load: () => import("../kinds/address/handshakes").then((m) => m.handshakes),
    ownRoutes: [],
    ops: [
      { name: "pull", method: "get", path: "/items" },
      { name: "ack", method: "post", path: "/items/ack" },
      { name: "info", method: "get", path: "" },
    ],
  },
  {
    kind: "proxies", family: "address",
    summary:
      "A public URL proxying to your upstream (streaming both ways) only for callers with the proxy's own credential " +
      "(bearer or basic, shown once) or from allowed IP ranges; upstream secrets (headers, query) injected sealed " +
      "and never shown; rate limit; request log.",
    load: () => import("../kinds/address/proxies").then((m) => m.proxies),
    ownRoutes: [],
    ops: [
      { name: "info", method: "get", path: "" },
      { name: "log", method: "get", path: "/log" },
      { name: "rotate_credential", method: "post", path: "/credential" },
    ],
  },
  {
    kind: "frontdoor", family: "address",
    summary:
      "A public URL where people and agents leave messages (up to 1 MiB) for you: each is pushed to your current " +
      "endpoint (signed, retried until a 2xx) or pulled and acked; the sender gets a receipt and a status URL. " +
      "Receiving is free.",
    load: () => import("../kinds/address/frontdoor").then((m) => m.frontdoor),
    ownRoutes: [],
    ops: [
      { name: "pull", method: "get", path: "/items" },
      { name: "ack", method: "post", path: "/items/ack" },
      { name: "set_endpoint", method: "put", path: "/endpoint" },
      { name: "info", method: "get", path: "" },
    ],
  },
  {
    kind: "notify", family: "address",
    summary:
      "A relay to people through up to 50 channels given as Apprise-style URLs (Slack, Telegram, Discord, ntfy, " +
      "Pushover, SMS gateways, e-mail APIs, incident tools: GET /v1/notify/channels); credentials kept encrypted; a " +
      "send goes to every channel as its own retried delivery, with a result per channel.",
    load: () => import("../kinds/address/notify").then((m) => m.notify),
    ownRoutes: [{ method: "get", path: "/v1/notify/channels" }],
    ops: [
      { name: "send", method: "post", path: "/sends" },
      { name: "get_send", method: "get", path: "/sends/{send_id}" },
      { name: "list_sends", method: "get", path: "/sends" },
      { name: "list_channels", method: "get", path: "/channels" },
      { name: "add_channel", method: "post", path: "/channels" },
      { name: "remove_channel", method: "delete", path: "/channels/{channel_id}" },
      { name: "info", method: "get", path: "" },
    ],
  },
  {
    kind: "forms", family: "address",
    summary:
      "A form page at a public address with up to 30 fields (text, email, textarea, select, checkbox, number) that " +
      "people fill in and scripts post JSON to; honeypot and per-address rate limit against spam; submissions kept, " +
      "listed, exported, and relayed to a webhook or a notify resource. Receiving is free.",
    load: () => import("../kinds/address/forms").then((m) => m.forms),
    ownRoutes: [],
    ops: [
      { name: "list_submissions", method: "get", path: "/submissions" },
      { name: "get_submission", method: "get", path: "/submissions/{submission_id}" },
      { name: "delete_submission", method: "delete", path: "/submissions/{submission_id}" },
      { name: "info", method: "get", path: "" },
    ],
  },
  {
    kind: "approvals", family: "address",
    summary:
      "A question for people with a hosted decision page at an unguessable link (up to 10 named approvers, each with " +
      "their own link, sent through a notify resource or a signed event); the first decision wins, or the timeout " +
      "(default_on_expiry); long-poll or callback for the result; the decision record is a JWS (typ " +
      "approval-decision+jws).",
    load: () => import("../kinds/address/approvals").then((m) => m.approvals),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
    ],
  },
  {
    kind: "oauth-callbacks", family: "address",
    summary:
      "A redirect_uri for an OAuth authorization: the state checked, the code exchanged server-side with PKCE (S256) " +
      "and a sealed client secret, the tokens kept sealed for the agent to long-poll; the person sees a page saying " +
      "they can close the tab.",
    load: () => import("../kinds/address/oauth-callbacks").then((m) => m.oauthCallbacks),
    ownRoutes: [],
    ops: [
      { name: "info", method: "get", path: "" },
      { name: "result", method: "get", path: "/result" },
    ],
  },
  {
    kind: "vaults", family: "memory",
    summary:
      "Key-value namespace: get/put/delete JSON values (up to 1.5 MiB) with metadata and a per-key TTL, " +
      "compare-and-set by version (ETag, If-Match, If-None-Match: *), prefix listing with a cursor, and batches of " +
      "writes that apply all or none.",
    load: () => import("../kinds/memory/vaults").then((m) => m.vaults),
    ownRoutes: [],
    ops: [
      { name: "info", method: "get", path: "" },
      { name: "get", method: "get", path: "/keys/{key}" },
      { name: "put", method: "put", path: "/keys/{key}", maxBodyBytes: 2097152 },
      { name: "delete", method: "delete", path: "/keys/{key}" },
      { name: "list", method: "get", path: "/keys" },
      { name: "get_many", method: "post", path: "/batch/get" },
      { name: "batch", method: "post", path: "/batch", maxBodyBytes: 8388608 },
    ],
  },
  {
    kind: "checkpoints", family: "memory",
    summary:
      "Crash checkpoint store: save JSON or bytes to a thread with a monotonic seq and optional expected_seq (409 on " +
      "a lost race); read the latest, one by id, or the history; keep_last per thread; parent_id forks into another " +
      "thread. Checkpoints up to 4194304 bytes (over 16384 kept in R2), 1000 per resource.",
    load: () => import("../kinds/memory/checkpoints").then((m) => m.checkpoints),
    ownRoutes: [],
    ops: [
      { name: "save", method: "post", path: "/checkpoints", maxBodyBytes: 6291456 },
      { name: "latest", method: "get", path: "/latest" },
      { name: "get", method: "get", path: "/checkpoints/{checkpoint_id}" },
      { name: "history", method: "get", path: "/history" },
      { name: "threads", method: "get", path: "/threads" },
      { name: "delete_thread", method: "delete", path: "/threads/{thread}" },
    ],
  },
  {
    kind: "journals", family: "memory",
    summary:
      "Append-only journal: server-assigned seq and time, optimistic appends with expected_seq, range reads, a " +
      "long-poll tail, entries hash-chained with SHA-256 (the rule is under JournalEntry.hash) and a head signed as " +
      "a JWS verifiable against /.well-known/jwks.json. Up to 100000 entries of at most 65536 bytes, 6291456 bytes " +
      "of data and types in all.",
    load: () => import("../kinds/memory/journals").then((m) => m.journals),
    ownRoutes: [],
    ops: [
      { name: "append", method: "post", path: "/entries" },
      { name: "append_batch", method: "post", path: "/entries/batch" },
      { name: "read", method: "get", path: "/entries" },
      { name: "entry", method: "get", path: "/entries/{seq}" },
      { name: "tail", method: "get", path: "/tail" },
      { name: "head", method: "get", path: "/head" },
      { name: "get", method: "get", path: "" },
    ],
  },
  {
    kind: "secrets", family: "memory",
    summary:
      "A secret encrypted at rest (AES-GCM) behind a public URL that reveals it once, on POST, and destroys it; " +
      "optional passphrase (PBKDF2, limited attempts); the status shows whether and when it was read; the owner can " +
      "burn it early.",
    load: () => import("../kinds/memory/secrets").then((m) => m.secrets),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "burn", method: "post", path: "/burn" },
    ],
  },
  {
    kind: "blobs", family: "memory",
    summary:
      "Blob parking: up to 100 MB for up to 48 h, streamed to R2, sha256, optional public link with a download limit.",
    load: () => import("../kinds/memory/blobs").then((m) => m.blobs),
    ownRoutes: [],
    ops: [
      { name: "upload", method: "put", path: "/content", maxBodyBytes: 100000000, rawBody: true },
      { name: "download", method: "get", path: "/content" },
      { name: "get", method: "get", path: "" },
      { name: "delete", method: "delete", path: "/content" },
    ],
  },
  {
    kind: "objects", family: "memory",
    summary:
      "Large object: up to 2000000000 bytes for up to 7 days in R2, by PUT (≤ 100000000), multipart upload " +
      "(create, parts, complete, abort, resume) or a source_url fetched server-side; Range reads; sha256.",
    load: () => import("../kinds/memory/objects").then((m) => m.objects),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "upload", method: "put", path: "/content", maxBodyBytes: 100000000, rawBody: true },
      { name: "download", method: "get", path: "/content" },
      { name: "delete", method: "delete", path: "/content" },
      { name: "fetch", method: "post", path: "/fetch" },
      { name: "create_upload", method: "post", path: "/uploads" },
      { name: "get_upload", method: "get", path: "/uploads/{upload_id}" },
      { name: "list_parts", method: "get", path: "/uploads/{upload_id}/parts" },
      { name: "upload_part", method: "put", path: "/uploads/{upload_id}/parts/{part_number}",
        maxBodyBytes: 100000000, rawBody: true },
      { name: "complete", method: "post", path: "/uploads/{upload_id}/complete" },
      { name: "abort", method: "delete", path: "/uploads/{upload_id}" },
    ],
  },
  {
    kind: "idempotency", family: "memory",
    summary:
      "Replay firewall: claim a key with a request fingerprint → `new` (with a lock token), 409 `in_flight`, " +
      "`duplicate` (with the stored result) or 422 `mismatch`; store the result or release the lock; a lapsed lock " +
      "lets the next identical claim through; keys are forgotten after window_seconds. Up to 10000 keys, results up " +
      "to 65536 bytes.",
    load: () => import("../kinds/memory/idempotency").then((m) => m.idempotency),
    ownRoutes: [],
    ops: [
      { name: "claim", method: "post", path: "/claim" },
      { name: "complete", method: "post", path: "/complete" },
      { name: "release", method: "post", path: "/release" },
      { name: "keys", method: "get", path: "/keys" },
      { name: "get_key", method: "get", path: "/keys/{key}" },
      { name: "delete_key", method: "delete", path: "/keys/{key}" },
    ],
  },
  {
    kind: "queues", family: "memory",
    summary:
      "Work queue with leases: push (delay, dedup id, priority); lease N with visibility_seconds and long-poll; ack, " +
      "nack with delay, extend; dead letters after max_receive_count, listable and redrivable; stats. Up to 100000 " +
      "messages of at most 65536 bytes, 4194304 bytes of bodies and dedup ids in all.",
    load: () => import("../kinds/memory/queues").then((m) => m.queues),
    ownRoutes: [],
    ops: [
      { name: "push", method: "post", path: "/messages" },
      { name: "push_batch", method: "post", path: "/messages/batch" },
      { name: "lease", method: "post", path: "/leases" },
      { name: "ack_batch", method: "post", path: "/leases/ack" },
      { name: "ack", method: "post", path: "/leases/{lease_id}/ack" },
      { name: "nack", method: "post", path: "/leases/{lease_id}/nack" },
      { name: "extend", method: "post", path: "/leases/{lease_id}/extend" },
      { name: "stats", method: "get", path: "/stats" },
      { name: "message", method: "get", path: "/messages/{message_id}" },
      { name: "delete", method: "delete", path: "/messages/{message_id}" },
      { name: "dead_letters", method: "get", path: "/dead" },
      { name: "redrive", method: "post", path: "/dead/redrive" },
    ],
  },
  {
    kind: "counters", family: "memory",
    summary: "Atomic counter: increment, decrement, set, compare-and-set, optional bounds and reset window.",
    load: () => import("../kinds/memory/counters").then((m) => m.counters),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "increment", method: "post", path: "/increment" },
      { name: "decrement", method: "post", path: "/decrement" },
      { name: "set", method: "put", path: "" },
      { name: "compare_and_set", method: "post", path: "/compare-and-set" },
    ],
  },
  {
    kind: "pages", family: "place",
    summary:
      "One HTML or Markdown page (up to 262144 bytes) at a public address: Markdown rendered safely, HTML served as " +
      "written and sandboxed (scripts only if opted in); ETag, Last-Modified and 304; updated in place; views " +
      "counted; title and description for link previews. Views are free.",
    load: () => import("../kinds/place/pages").then((m) => m.pages),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "get_content", method: "get", path: "/content" },
      { name: "update", method: "put", path: "" },
    ],
  },
  {
    kind: "sites", family: "place",
    summary:
      "A static site from a zip (up to 50000000 bytes, 5000 files) unpacked into R2 as it streams in and served at a " +
      "public address: index.html, directory indexes, SPA fallback, content types, ETag and 304, Cache-Control; " +
      "redeploys swap atomically, the previous version kept for a rollback. Serving is free.",
    load: () => import("../kinds/place/sites").then((m) => m.sites),
    ownRoutes: [],
    ops: [
      { name: "deploy", method: "put", path: "/deploy", maxBodyBytes: 50000000, rawBody: true },
      { name: "get", method: "get", path: "" },
      { name: "list_files", method: "get", path: "/files" },
      { name: "list_deploys", method: "get", path: "/deploys" },
      { name: "rollback", method: "post", path: "/rollback" },
    ],
  },
  {
    kind: "links", family: "place",
    summary:
      "A short public URL that redirects (302 or 307) to a target URL, or serves one of your blobs or objects, until " +
      "it expires or max_clicks is reached (then 410); clicks counted and logged (time, referrer host, country; the " +
      "newest 10000). Clicks are free.",
    load: () => import("../kinds/place/links").then((m) => m.links),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "list_clicks", method: "get", path: "/clicks" },
    ],
  },
  {
    kind: "pdf", family: "place",
    summary:
      "HTML or a URL rendered to a real PDF by headless Chromium (Browser Rendering, or a Gotenberg engine): paper " +
      "size, margins, landscape, background, scale, header and footer templates, wait for a selector or a delay; " +
      "each PDF kept until the resource ends, downloadable by signed link. A failed render is not charged.",
    load: () => import("../kinds/place/pdf").then((m) => m.pdf),
    ownRoutes: [],
    ops: [
      { name: "render", method: "post", path: "/renders", maxBodyBytes: 5200000 },
      { name: "list_renders", method: "get", path: "/renders" },
      { name: "get_render", method: "get", path: "/renders/{render_id}" },
      { name: "download", method: "get", path: "/renders/{render_id}/content" },
      { name: "delete_render", method: "delete", path: "/renders/{render_id}" },
    ],
  },
  {
    kind: "watches", family: "watching",
    summary:
      "A check of one of 13 types every interval_seconds (≥ 60): watch.down after alert_after failures in a row, " +
      "watch.up after recover_after successes, watch.changed; a check history.",
    load: () => import("../kinds/watching/watches").then((m) => m.watches),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "history", method: "get", path: "/checks" },
      { name: "check", method: "post", path: "/checks" },
      { name: "pause", method: "post", path: "/pause" },
      { name: "resume", method: "post", path: "/resume" },
    ],
  },
  {
    kind: "watch-groups", family: "watching",
    summary:
      "An expression over watches and groups (and, or, not, at least K of N; unknown children in three-valued " +
      "logic): group.down and group.up only on the group's own transitions.",
    load: () => import("../kinds/watching/watch-groups").then((m) => m.watchGroups),
    ownRoutes: [],
    ops: [
      { name: "get", method: "get", path: "" },
      { name: "transitions", method: "get", path: "/transitions" },
    ],
  },
  {
    kind: "escalations", family: "watching",
    summary:
      "Steps of (delay, targets: URLs or notify resources), repeated; each incident escalates until acknowledged " +
      "(its ack page or the API) or resolved (or its watch or group recovers).",
    load: () => import("../kinds/watching/escalations").then((m) => m.escalations),
    ownRoutes: [],
    ops: [
      { name: "trigger", method: "post", path: "/incidents" },
      { name: "list", method: "get", path: "/incidents" },
      { name: "get_incident", method: "get", path: "/incidents/{incident_id}" },
      { name: "ack", method: "post", path: "/incidents/{incident_id}/ack" },
      { name: "resolve", method: "post", path: "/incidents/{incident_id}/resolve" },
    ],
  },
  {
    kind: "ocr", family: "utilities",
    summary:
      "Text from an image (PNG, JPEG, TIFF, WebP) or a PDF (up to 20000000 bytes), uploaded or fetched from a URL, " +
      "read by tesseract: per page, the text and each word with its box and confidence, in the languages chosen. A " +
      "file that cannot be read is not charged.",
    load: () => import("../kinds/utilities/ocr").then((m) => m.ocr),
    ownRoutes: [],
    ops: [
      { name: "recognize", method: "put", path: "/recognitions", maxBodyBytes: 20000000, rawBody: true },
      { name: "recognize_url", method: "post", path: "/recognitions/from-url" },
      { name: "list_recognitions", method: "get", path: "/recognitions" },
      { name: "get_recognition", method: "get", path: "/recognitions/{recognition_id}" },
      { name: "delete_recognition", method: "delete", path: "/recognitions/{recognition_id}" },
    ],
  },
  {
    kind: "convert", family: "utilities",
    summary:
      "A document to PDF (up to 20000000 bytes): HTML, Markdown, plain text and images printed by headless Chromium; " +
      "DOCX, ODT, RTF, XLSX, ODS, PPTX, ODP and the older Office formats by LibreOffice. Each PDF kept until the " +
      "resource ends, downloadable by signed link. A failed conversion is not charged.",
    load: () => import("../kinds/utilities/convert").then((m) => m.convertKind),
    ownRoutes: [],
    ops: [
      { name: "convert", method: "put", path: "/conversions", maxBodyBytes: 20000000, rawBody: true },
      { name: "list_conversions", method: "get", path: "/conversions" },
      { name: "get_conversion", method: "get", path: "/conversions/{conversion_id}" },
      { name: "download", method: "get", path: "/conversions/{conversion_id}/content" },
      { name: "delete_conversion", method: "delete", path: "/conversions/{conversion_id}" },
    ],
  },
  {
    kind: "egress-connectors", family: "utilities",
    summary:
      "Requests to an allowlist of hosts (exact or `*.domain`), sent from the operator's fixed egress addresses " +
      "(`egress_ips`, also in the price list) through its forward proxy; the answer returned whole, up to 10485760 " +
      "bytes. Other hosts get 403; refused or failed requests are not charged.",
    load: () => import("../kinds/utilities/egress-connectors").then((m) => m.egressConnectors),
    ownRoutes: [],
    ops: [
      { name: "fetch", method: "post", path: "/fetch" },
      { name: "get_connector", method: "get", path: "/connector" },
      { name: "list_requests", method: "get", path: "/requests" },
    ],
  },
  {
    kind: "transfers", family: "utilities",
    summary:
      "Server-side copies between HTTP(S) URLs, S3-compatible buckets (SigV4; multipart) and your own blobs and " +
      "objects, streamed part by part, with progress (bytes, percent, rate), the SHA-256 of every byte and the " +
      "stores' ETags; a transfer that fails part-way resumes from the last part moved.",
    load: () => import("../kinds/utilities/transfers").then((m) => m.transfers),
    ownRoutes: [],
    ops: [
      { name: "start", method: "post", path: "/transfers" },
      { name: "list_transfers", method: "get", path: "/transfers" },
      { name: "get_transfer", method: "get", path: "/transfers/{transfer_id}" },
      { name: "resume", method: "post", path: "/transfers/{transfer_id}/resume" },
      { name: "cancel", method: "post", path: "/transfers/{transfer_id}/cancel" },
      { name: "delete_transfer", method: "delete", path: "/transfers/{transfer_id}" },
    ],
  },
];

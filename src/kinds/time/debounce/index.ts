/**
 * debounce: a quiet-period debouncer (Inngest debounce). Events come by the API or
 * the public address, each into its key's window; a window fires once, as one
 * debounce.fired request, after quiet_seconds without events and never later than
 * max_wait_seconds after its first, carrying the last event or all of them.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import {
  addEvent,
  allWindows,
  cancelWindows,
  counts,
  initWindows,
  listWindows,
  openWindows,
  requireWindow,
  windowDetail,
} from "./store/windows";
import { allFired, finished, flush, listFired, nextFireAt, timer } from "./store/firing";
import { eventFace } from "./public";
import {
  accepted,
  cancelResult,
  debounceConfig,
  debounceStatus,
  eventInput,
  firingPage,
  flushResult,
  keyInput,
  listInput,
  manyInput,
  windowDetail as windowDetailSchema,
  windowPage,
  type DebounceConfig,
  MAX_WAIT_SECONDS,
  MAX_EVENT_BYTES,
  MAX_EVENTS_PER_WINDOW,
  MAX_OPEN_WINDOWS,
} from "./schema";
import type { EngineStore } from "../../../kind/kind";
import { TABLES as WINDOWS_TABLES } from "./store/windows";
import { TABLES as FIRING_TABLES } from "./store/firing";

const OP_PRICE = 100; // µUSD

function statusView(store: EngineStore) {
  const c = counts(store);
  return {
    open_windows: openWindows(store),
    events_received: c.events,
    fired: c.fired,
    cancelled: c.cancelled,
    next_fire_at: nextFireAt(store),
  };
}

const kind = kindOf<DebounceConfig>();

export const debounce = kind.define({
  kind: "debounce",
  family: "time",
  title: "Debouncer",
  summary:
    "Events posted by the API or to the public URL, grouped by optional key; each key's window fires once, " +
    "quiet_seconds after its last event and never later than max_wait_seconds after its first, delivering " +
    "the last event or all of them (mode).",
  targetFields: ["url"],
  createSchema: debounceConfig,
  example: {
    url: "https://example.com/hooks/rebuild",
    quiet_seconds: 60,
    max_wait_seconds: 600,
    mode: "all",
    key_path: "repo",
  },
  migrations: [{ sql: [...WINDOWS_TABLES, ...FIRING_TABLES] }],
  // Events at the public address and the firings are free one by one: the day rate covers them.
  dayPriceMicro: 5000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: {
    max_wait_seconds: MAX_WAIT_SECONDS,
    max_event_bytes: MAX_EVENT_BYTES,
    max_events_per_window: MAX_EVENTS_PER_WINDOW,
    max_open_windows: MAX_OPEN_WINDOWS,
  },
  sends: {
    "debounce.fired":
      "A window closed: data.event (mode last) or data.events (mode all), with its key, reason and counts.",
  },
  init: (store) => {
    initWindows(store);
  },
  usage: (store) => {
    const c = counts(store);
    return { open_windows: openWindows(store), events: c.events, fired: c.fired };
  },
  status: (store) => statusView(store),
  exportData: (store) => ({ status: statusView(store), windows: allWindows(store), fired: allFired(store) }),
  timer,
  onDeliveryFinished: (store, _config, deliveryId, outcome) => finished(store, deliveryId, outcome),
  public: eventFace,
  ops: [
    kind.op({
      name: "post_event",
      method: "post",
      path: "/events",
      summary: "Post an event into its key's window",
      priceMicro: OP_PRICE,
      input: eventInput,
      output: accepted,
      errors: [413],
      example: { input: { key: "repo-42", event: { type: "push", sha: "9f2c1e7" } } },
      run: (store, config, input) =>
        addEvent(store, config, { event: input.event ?? null, key: input.key, source: "api" }),
    }),
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "Counters and the next firing",
      priceMicro: OP_PRICE,
      input: noInput,
      output: debounceStatus,
      run: (store) => statusView(store),
    }),
    kind.op({
      name: "windows",
      method: "get",
      path: "/windows",
      summary: "Open windows, oldest first",
      priceMicro: OP_PRICE,
      input: listInput,
      output: windowPage,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => listWindows(store, input.limit, input.cursor),
    }),
    kind.op({
      name: "window",
      method: "get",
      path: "/window",
      summary: "One open window with its events",
      priceMicro: OP_PRICE,
      input: keyInput,
      output: windowDetailSchema,
      errors: [404],
      example: { input: { key: "repo-42" }, after: ["post_event"] },
      run: (store, _config, input) => windowDetail(store, requireWindow(store, input.key ?? "")),
    }),
    kind.op({
      name: "flush",
      method: "post",
      path: "/flush",
      summary: "Fire a window now (or all of them)",
      priceMicro: OP_PRICE,
      input: manyInput,
      output: flushResult,
      errors: [404],
      example: { input: { key: "repo-42" }, after: ["post_event"] },
      run: (store, config, input) => flush(store, config, input),
    }),
    kind.op({
      name: "cancel",
      method: "post",
      destructive: true,
      path: "/windows/cancel",
      summary: "Close a window without firing it (or all of them)",
      priceMicro: OP_PRICE,
      input: manyInput,
      output: cancelResult,
      errors: [404],
      example: { input: { all: true }, after: ["post_event"] },
      run: (store, _config, input) => cancelWindows(store, input),
    }),
    kind.op({
      name: "fired",
      method: "get",
      path: "/fired",
      summary: "Past firings, newest first, with their delivery outcome",
      priceMicro: OP_PRICE,
      input: listInput,
      output: firingPage,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => listFired(store, input.limit, input.cursor),
    }),
  ],
});

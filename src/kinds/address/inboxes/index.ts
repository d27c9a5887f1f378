/**
 * inboxes: a buffered webhook inbox (Hookdeck, Svix Ingest). Its public address takes any method,
 * at the address or below it, with a body up to 10 MiB, and keeps each request in arrival order,
 * byte-exact; the agent pulls with a cursor and a long-poll, and acks what it handled (acked items
 * leave the pull and stay in the export until the inbox ends). Optionally each request's signature
 * is checked as its provider signs it (Stripe, GitHub, Slack, Standard Webhooks, Shopify, Twitch, Zoom), marking
 * it verified or not, or refusing it.
 */
import { noInput } from "../../../openapi/schemas";
import { seal } from "../../../auth/sealing";
import { kindOf } from "../../../kind/kind";
import { inboxFace } from "./public";
import { SIGNATURE_TOLERANCE_SECONDS } from "../captures/signatures";
import { allRows, TABLES } from "../captures/store";
import { allItems, MAX_BATCH, pullInfo, pullOps } from "../captures/pull";
import { saveSecret, SECRET_TABLE } from "./store";
import {
  inboxCreate,
  inboxInfo,
  MAX_BYTES,
  MAX_ITEM_BYTES,
  MAX_ITEMS,
  type InboxConfig,
  type InboxCreate,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

/** The create body (with the secret) on the way in; what the record shows once sealCreate took the secret out. */
type Config = InboxCreate | InboxConfig;

const kind = kindOf<Config>();

const shown = (config: Config): InboxConfig => ({
  verify: config.verify && { provider: config.verify.provider, reject_unverified: config.verify.reject_unverified },
});

export const inboxes = kind.define({
  kind: "inboxes",
  family: "address",
  title: "Webhook inbox",
  summary:
    "A public URL taking any method and path below it, bodies up to 10 MiB, each request kept byte-exact " +
    "in arrival order; pull with a cursor and long-poll, ack. Optional signature checks (Stripe, GitHub, " +
    "Slack, Standard Webhooks, Shopify, Twitch, Zoom). Receiving is free.",
  createSchema: inboxCreate,
  example: { verify: { provider: "github", secret: "It's a Secret to Everybody", reject_unverified: false } },
  migrations: [{ sql: [...TABLES, SECRET_TABLE] }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 90 * 86400,
  limits: {
    max_items: MAX_ITEMS,
    max_bytes: MAX_BYTES,
    max_item_bytes: MAX_ITEM_BYTES,
    max_batch: MAX_BATCH,
    signature_tolerance_seconds: SIGNATURE_TOLERANCE_SECONDS,
  },
  sealCreate: async (env, config) => ({
    config: shown(config),
    sealed: config.verify && "secret" in config.verify ? seal(env, config.verify.secret) : null,
  }),
  init: (store, _config, sealed) => {
    if (typeof sealed === "string") saveSecret(store, sealed);
  },
  usage: (store) => {
    const { pending, acked, bytes } = pullInfo(store.sql);
    return { pending, acked, bytes };
  },
  exportData: (store, config) => ({
    ...pullInfo(store.sql),
    verify: shown(config).verify,
    items: allItems(store, allRows(store.sql)),
  }),
  public: inboxFace,
  ops: [
    ...pullOps(OP_PRICE),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Counts, the latest seq and the signature check",
      priceMicro: OP_PRICE,
      input: noInput,
      output: inboxInfo,
      run: (store, config) => ({ ...pullInfo(store.sql), verify: shown(config).verify }),
    }),
  ],
});

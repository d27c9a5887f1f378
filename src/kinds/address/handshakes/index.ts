/**
 * handshakes: a challenge responder (Hookdeck). Its public address answers the verification
 * challenges providers send before they deliver to a URL (Slack, Meta/WhatsApp, Microsoft Graph,
 * X/Twitter CRC, Zoom, Twitch EventSub, Dropbox), with the secrets given at create, sealed; every
 * other request is buffered like an inbox's, for the agent to pull and ack.
 */
import { noInput } from "../../../openapi/schemas";
import { seal } from "../../../auth/sealing";
import { kindOf } from "../../../kind/kind";
import { allRows, TABLES as CAPTURE_TABLES } from "../captures/store";
import { allItems, MAX_BATCH, pullInfo, pullOps } from "../captures/pull";
import { handshakesFace } from "./public";
import { handshakesAnswered, saveSecrets, TABLES } from "./store";
import {
  HANDSHAKE_LOG,
  handshakesCreate,
  handshakesInfo,
  MAX_BYTES,
  MAX_ITEM_BYTES,
  MAX_ITEMS,
  SECRET_FIELDS,
  type HandshakesConfig,
  type HandshakesCreate,
  type SecretField,
  type Secrets,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

/** The create body (with the secrets) on the way in; what the record shows once sealCreate took them out. */
type Config = HandshakesCreate | HandshakesConfig;

const kind = kindOf<Config>();

const given = (config: Config): SecretField[] =>
  "secrets" in config && Array.isArray(config.secrets)
    ? config.secrets
    : (Object.keys(SECRET_FIELDS) as SecretField[]).filter((f) => (config as Secrets)[f] !== undefined);

export const handshakes = kind.define({
  kind: "handshakes",
  family: "address",
  title: "Challenge responder",
  summary:
    "A public URL answering providers' verification challenges (Slack, Meta/WhatsApp, Microsoft Graph, X " +
    "CRC, Zoom, Twitch, Dropbox) with sealed secrets; every other request is buffered like an inbox's. " +
    "Receiving is free.",
  createSchema: handshakesCreate,
  example: {
    meta_verify_token: "meatyhamhock",
    twitter_consumer_secret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
  },
  migrations: [{ sql: [...CAPTURE_TABLES, ...TABLES] }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: {
    max_items: MAX_ITEMS,
    max_bytes: MAX_BYTES,
    max_item_bytes: MAX_ITEM_BYTES,
    max_batch: MAX_BATCH,
    handshake_log: HANDSHAKE_LOG,
  },
  sealCreate: async (env, config) => {
    const secrets = Object.fromEntries(
      Object.entries(config).filter(([k, v]) => k in SECRET_FIELDS && typeof v === "string"),
    );
    return {
      config: { secrets: given(config) },
      sealed: Object.keys(secrets).length ? seal(env, JSON.stringify(secrets)) : null,
    };
  },
  init: (store, _config, sealed) => {
    if (typeof sealed === "string") saveSecrets(store, sealed);
  },
  usage: (store) => {
    const { pending, acked, bytes } = pullInfo(store.sql);
    return { pending, acked, bytes };
  },
  exportData: (store, config) => ({
    ...pullInfo(store.sql),
    secrets: given(config),
    handshakes: handshakesAnswered(store.sql),
    items: allItems(store, allRows(store.sql)),
  }),
  public: handshakesFace,
  ops: [
    ...pullOps(OP_PRICE),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Counts, which secrets are set, and the handshakes answered",
      priceMicro: OP_PRICE,
      input: noInput,
      output: handshakesInfo,
      run: (store, config) => ({
        ...pullInfo(store.sql),
        secrets: given(config),
        handshakes: handshakesAnswered(store.sql),
      }),
    }),
  ],
});

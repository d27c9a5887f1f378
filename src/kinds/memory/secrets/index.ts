/**
 * secrets: a one-time-read secret (OneTimeSecret, Vault response wrapping). The value is
 * encrypted before it reaches storage (sealCreate: AES-GCM under the service key, and
 * under a passphrase-derived key when there is a passphrase); the public address reveals
 * it once, on POST, and destroys it in the same transaction. The owner sees only whether
 * and when it was read (or burned), and may burn it early. The export is that status:
 * never the value, which the service cannot give twice.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { sealSecret, sealedSecretSchema } from "./crypto";
import { revealFace } from "./public";
import { burn, initSecret, secretStatusView, usageOf } from "./store";
import {
  MAX_VALUE_BYTES,
  MAX_ATTEMPTS,
  secretCreate,
  secretStatus,
  type SecretConfig,
  type SecretCreate,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD

/** The create body (with the value) on the way in; what the record shows once sealCreate took the value out. */
type Config = SecretCreate | SecretConfig;

const kind = kindOf<Config>();

export const secrets = kind.define({
  kind: "secrets",
  family: "memory",
  title: "One-time secret",
  summary:
    "A secret encrypted at rest (AES-GCM) behind a public URL that reveals it once, on POST, and destroys " +
    "it; optional passphrase (PBKDF2, limited attempts); the status shows whether and when it was read; " +
    "the owner can burn it early.",
  createSchema: secretCreate,
  example: {
    value: "postgres://app:s3cret@db.example.com:5432/app",
    passphrase: "correct horse battery staple",
    max_passphrase_attempts: 3,
    ttl_seconds: 86400,
  },
  migrations: [{ sql: TABLES }],
  // The reveal at the public address is free: the day rate covers it and the passphrase checks.
  dayPriceMicro: 1000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 90 * 86400,
  limits: { max_value_bytes: MAX_VALUE_BYTES, max_passphrase_attempts: MAX_ATTEMPTS },
  sealCreate: async (env, config) => {
    if (!("value" in config)) throw new Error("secrets: sealCreate expects the create body");
    const shown: SecretConfig = {
      passphrase_required: config.passphrase !== undefined,
      max_passphrase_attempts: config.max_passphrase_attempts,
    };
    const sealed = await sealSecret(env, config.value, config.passphrase, config.max_passphrase_attempts);
    return { config: shown, sealed };
  },
  init: (store, _config, sealed) => initSecret(store, sealedSecretSchema.parse(sealed)),
  usage: (store) => usageOf(store),
  status: (store) => secretStatusView(store),
  exportData: (store) => ({ secret: secretStatusView(store), value_exported: false }),
  public: revealFace,
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "Whether and when the secret was read (or burned); never its value",
      priceMicro: OP_PRICE,
      input: noInput,
      output: secretStatus,
      run: (store) => secretStatusView(store),
    }),
    kind.op({
      name: "burn",
      method: "post",
      destructive: true,
      path: "/burn",
      summary: "Destroy the secret unread (no change once read or burned)",
      priceMicro: OP_PRICE,
      input: noInput,
      output: secretStatus,
      run: (store) => {
        burn(store, "owner");
        return secretStatusView(store);
      },
    }),
  ],
});

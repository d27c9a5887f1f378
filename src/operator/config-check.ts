/**
 * What a deployment must have before it may take money: the settings that, missing or wrong, would
 * turn into a 500, a payment to the wrong place, or money that is not real. One list, read by the
 * Worker (config-guard.ts answers 503 while it is not empty) and by `npm run setup` and
 * `npm run deploy` (which refuse to deploy such a config), so the three never disagree.
 *
 * Pure: it reads a record of settings and imports nothing of the Worker's, so the Node scripts can
 * bundle it. A secret the scripts only know by name (wrangler lists names, never values) is passed
 * in `opaque`: it counts as set, and its format is not checked.
 */
import { keccak_256 } from "@noble/hashes/sha3";

export interface ConfigProblem {
  /** The setting (or settings, joined by " / ") to fix. */
  setting: string;
  problem: string;
  fix: string;
  /**
   * `service`: nothing but liveness, the operator endpoints and the documentation is served; `operator`: the operator
   * endpoints are refused.
   */
  scope: "service" | "operator";
}

export type Settings = Readonly<Record<string, string | undefined>>;

/** The networks the service can take USDC on, with the token's contract and EIP-712 domain there. */
export const NETWORKS = {
  base: {
    chainId: 8453,
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    assetName: "USD Coin",
    assetVersion: "2",
    testnet: false,
  },
  "base-sepolia": {
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    assetName: "USDC",
    assetVersion: "2",
    testnet: true,
  },
} as const;
export type NetworkName = keyof typeof NETWORKS;

/** Addresses nobody holds the key of: money paid to them is gone. */
const BURN_ADDRESSES = new Set([
  "0x0000000000000000000000000000000000000000",
  "0x000000000000000000000000000000000000dead",
  "0xdead000000000000000042069420694206942069",
]);
/** x402.org's public facilitator settles testnets only. */
const TESTNET_FACILITATOR = /^https:\/\/(www\.)?x402\.org\//;
const SETUP = "`npm run setup` (it asks for this and writes it)";

export function isDevelopmentSetting(environment: string | undefined): boolean {
  return environment === "development" || environment === "test";
}

/** EIP-55: a mixed-case address carries a checksum, and a typo in it breaks it. All-lower or all-upper carry none. */
function checksumHolds(address: string): boolean {
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  const hash = keccak_256(new TextEncoder().encode(hex.toLowerCase()));
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 ? 0 : 4)) & 0xf;
    const expectUpper = nibble >= 8;
    if (/[a-f]/i.test(hex[i]!) && (hex[i] === hex[i]!.toUpperCase()) !== expectUpper) return false;
  }
  return true;
}

/** An https origin to publish: no path beyond `/`, no query, no credentials. */
function originProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not a URL";
  }
  if (url.protocol !== "https:") return "must be an https:// URL";
  if (url.username || url.password || url.search || url.hash || url.pathname !== "/")
    return "must be an origin only (https://host, no path, query or credentials)";
  return null;
}

function privateJwkProblem(json: string, kty: "RSA" | "EC or RSA"): string | null {
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return "is not JSON (a private JWK)";
  }
  if (typeof jwk !== "object" || jwk === null || typeof jwk.d !== "string")
    return "is not a private JWK (it has no `d`)";
  if (kty === "RSA" ? jwk.kty !== "RSA" : jwk.kty !== "EC" && jwk.kty !== "RSA") return `must be a ${kty} key`;
  return null;
}

function base64Length(value: string): number | null {
  try {
    return atob(value.trim()).length;
  } catch {
    return null;
  }
}

const positive = (value: string | undefined) =>
  value !== undefined && value.trim() !== "" && Number.isFinite(Number(value)) && Number(value) > 0;

/**
 * Every problem of a deployment's settings; empty when it may serve. Development and test
 * deployments have their conveniences (settlement `none`, generated keys) and no problems.
 */
export function configProblems(settings: Settings, opaque: ReadonlySet<string> = new Set()): ConfigProblem[] {
  const environment = settings.ENVIRONMENT;
  if (isDevelopmentSetting(environment)) return [];
  const out: ConfigProblem[] = [];
  const add = (setting: string, problem: string, fix: string, scope: ConfigProblem["scope"] = "service") =>
    out.push({ setting, problem, fix, scope });
  const has = (name: string) => opaque.has(name) || Boolean(settings[name]?.trim());
  const known = (name: string) => (opaque.has(name) ? null : (settings[name]?.trim() ?? ""));
  const staging = environment === "staging";

  if (environment !== "production" && !staging) {
    add(
      "ENVIRONMENT",
      `is ${JSON.stringify(environment ?? "")}: a deployment is \`production\` or \`staging\``,
      "Set ENVIRONMENT to production (or staging) in the environment's [vars].",
    );
  }

  // Where the service says it lives: links, OAuth issuer and audience, x402 resource URLs.
  if (!has("BASE_URL"))
    add("BASE_URL", "is not set", `Set it to the service's public origin, e.g. https://api.example.com: ${SETUP}.`);
  for (const name of ["BASE_URL", "AUTH_URL", "PUBLIC_BASE_URL"]) {
    const value = known(name);
    const why = value ? originProblem(value) : null;
    if (why) add(name, why, `Set it to an origin such as https://api.example.com: ${SETUP}.`);
  }

  // Where the money goes, and whether it is real.
  const payTo = known("X402_PAY_TO");
  if (!payTo) add("X402_PAY_TO", "is not set", `Set it to the address that receives payments: ${SETUP}.`);
  else if (!/^0x[0-9a-fA-F]{40}$/.test(payTo))
    add("X402_PAY_TO", "is not an EVM address (0x and 40 hex digits)", `Set it to your receiving address: ${SETUP}.`);
  else if (BURN_ADDRESSES.has(payTo.toLowerCase()))
    add(
      "X402_PAY_TO",
      "is the zero or a burn address: payments to it are lost",
      `Set it to an address you hold the key of: ${SETUP}.`,
    );
  else if (!checksumHolds(payTo))
    add(
      "X402_PAY_TO",
      "fails its EIP-55 checksum (a typo in the address?)",
      "Copy the address again from your wallet.",
    );

  const networkName = settings.X402_NETWORK ?? "";
  const network = Object.hasOwn(NETWORKS, networkName) ? NETWORKS[networkName as NetworkName] : null;
  if (!network) {
    add(
      "X402_NETWORK",
      `is ${JSON.stringify(networkName)}, not a network this service settles on (${Object.keys(NETWORKS).join(", ")})`,
      `Set it to base: ${SETUP}.`,
    );
  } else {
    if (network.testnet && !staging)
      add(
        "X402_NETWORK",
        `is ${networkName}, a testnet: its USDC is worth nothing`,
        "Set X402_NETWORK to base (with its chain id and asset), or deploy this as staging.",
      );
    if (String(network.chainId) !== settings.X402_CHAIN_ID)
      add(
        "X402_CHAIN_ID",
        `is ${JSON.stringify(settings.X402_CHAIN_ID ?? "")}, but ${networkName} is chain ${network.chainId}`,
        `Set X402_CHAIN_ID to ${network.chainId}.`,
      );
    if (network.asset.toLowerCase() !== (settings.X402_ASSET ?? "").toLowerCase())
      add("X402_ASSET", `is not ${networkName}'s USDC`, `Set X402_ASSET to ${network.asset}.`);
    if (network.assetName !== settings.X402_ASSET_NAME || network.assetVersion !== settings.X402_ASSET_VERSION) {
      add(
        "X402_ASSET_NAME / X402_ASSET_VERSION",
        `are not the EIP-712 domain of ${networkName}'s USDC: no payment signature would verify`,
        `Set them to "${network.assetName}" and "${network.assetVersion}".`,
      );
    }
  }

  const settlement = settings.X402_SETTLEMENT ?? "";
  if (settlement === "none")
    add(
      "X402_SETTLEMENT",
      "is none: payments are accepted without moving any money",
      "Set it to facilitator or direct.",
    );
  else if (settlement === "facilitator") {
    const url = known("FACILITATOR_URL");
    if (url !== null && !/^https:\/\//.test(url))
      add(
        "FACILITATOR_URL",
        "must be an https:// URL",
        "Set it to your x402 facilitator, e.g. https://facilitator.payai.network.",
      );
    else if (url && network && !network.testnet && TESTNET_FACILITATOR.test(url)) {
      add(
        "FACILITATOR_URL",
        "is x402.org's facilitator, which settles testnets only",
        "Point it at a facilitator that settles on base, or use X402_SETTLEMENT=direct.",
      );
    }
  } else if (settlement === "direct") {
    const rpc = known("RPC_URL");
    if (rpc !== null && !/^https:\/\//.test(rpc))
      add(
        "RPC_URL",
        "must be an https:// JSON-RPC endpoint (direct settlement submits through it)",
        "Set RPC_URL to your Base RPC endpoint.",
      );
    const relayer = known("RELAYER_PRIVATE_KEY");
    if (!has("RELAYER_PRIVATE_KEY"))
      add(
        "RELAYER_PRIVATE_KEY",
        "is not set (direct settlement signs with it)",
        "Upload it: npx wrangler secret put RELAYER_PRIVATE_KEY.",
      );
    else if (relayer !== null && !/^(0x)?[0-9a-fA-F]{64}$/.test(relayer))
      add(
        "RELAYER_PRIVATE_KEY",
        "is not a 32-byte hex private key",
        "Upload the relayer's key again: npx wrangler secret put RELAYER_PRIVATE_KEY.",
      );
  } else
    add(
      "X402_SETTLEMENT",
      `is ${JSON.stringify(settlement)}, not facilitator or direct`,
      "Set it to facilitator or direct.",
    );

  // The keys: signing (access tokens, receipts, attestations), the notary's, and encryption at rest.
  const generate = `\`npm run setup\` generates and uploads it`;
  for (const name of ["OAUTH_PRIVATE_JWK", "OAUTH_NEXT_PRIVATE_JWK"]) {
    const value = known(name);
    if (name === "OAUTH_PRIVATE_JWK" && !has(name))
      add(
        name,
        "is not set: access tokens, receipts and attestations cannot be signed",
        `${generate} (or: npm run -s keys:generate | npx wrangler secret put ${name}).`,
      );
    const why = value ? privateJwkProblem(value, "RSA") : null;
    if (why) add(name, why, `${generate} (or: npm run -s keys:generate | npx wrangler secret put ${name}).`);
  }
  if (!has("TSA_PRIVATE_JWK") || !has("TSA_CERT_PEM"))
    add(
      "TSA_PRIVATE_JWK / TSA_CERT_PEM",
      "are not both set: the notary cannot stamp",
      `${generate} (or: npm run -s keys:generate -- --tsa).`,
    );
  const tsa = known("TSA_PRIVATE_JWK");
  const tsaWhy = tsa ? privateJwkProblem(tsa, "EC or RSA") : null;
  if (tsaWhy) add("TSA_PRIVATE_JWK", tsaWhy, `${generate} (or: npm run -s keys:generate -- --tsa).`);
  const cert = known("TSA_CERT_PEM");
  if (cert && !cert.includes("-----BEGIN CERTIFICATE-----"))
    add(
      "TSA_CERT_PEM",
      "is not a PEM certificate",
      "Upload the certificate keys:generate -- --tsa wrote: npx wrangler secret put TSA_CERT_PEM < " +
        "tsa-certificate.pem.",
    );
  const dataKey = known("DATA_ENCRYPTION_KEY");
  if (!has("DATA_ENCRYPTION_KEY"))
    add(
      "DATA_ENCRYPTION_KEY",
      "is not set: secrets cannot be kept at rest",
      `${generate} (or: openssl rand -base64 32 | npx wrangler secret put DATA_ENCRYPTION_KEY).`,
    );
  else if (dataKey && base64Length(dataKey) !== 32)
    add(
      "DATA_ENCRYPTION_KEY",
      "is not 32 bytes in base64",
      "Upload a new one: openssl rand -base64 32 | npx wrangler secret put DATA_ENCRYPTION_KEY.",
    );

  // Safety of the service toward others.
  if (settings.ALLOW_PRIVATE_TARGETS === "true")
    add(
      "ALLOW_PRIVATE_TARGETS",
      "is true: callers could make the service reach private and loopback addresses",
      'Set ALLOW_PRIVATE_TARGETS = "false".',
    );
  if (!positive(settings.DELIVERY_RETRY_SCALE) || Number(settings.DELIVERY_RETRY_SCALE) < 1)
    add(
      "DELIVERY_RETRY_SCALE",
      "is below 1: failed deliveries would be retried faster than the published schedule",
      'Set DELIVERY_RETRY_SCALE = "1".',
    );
  for (const name of [
    "CREDIT_TOKEN_DAYS",
    "MIN_PURCHASE_USD",
    "MAX_PURCHASE_USD",
    "X402_MAX_TIMEOUT_SECONDS",
    "RATE_LIMIT_PER_MINUTE",
    "IP_RATE_LIMIT_PER_MINUTE",
    "ASK_RATE_LIMIT_PER_MINUTE",
    "ADDRESS_RATE_LIMIT_PER_MINUTE",
  ]) {
    if (!positive(settings[name]))
      add(
        name,
        `is ${JSON.stringify(settings[name] ?? "")}, not a positive number`,
        `Set ${name} to a positive number (wrangler.toml has the defaults).`,
      );
  }

  // The operator token: unset is a choice (the operator endpoints do not exist); set, it must be strong.
  const admin = known("ADMIN_TOKEN");
  if (admin && (admin.length < 32 || new Set(admin).size < 12)) {
    add(
      "ADMIN_TOKEN",
      "is weak (fewer than 32 characters, or too few distinct ones)",
      "Upload a random one: openssl rand -base64 32 | npx wrangler secret put ADMIN_TOKEN.",
      "operator",
    );
  }
  return out;
}

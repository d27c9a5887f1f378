/**
 * The few settings only the operator knows (where the service lives, where the money goes, how it is
 * settled), taken from a flag, else an environment variable, else what wrangler.toml already has,
 * else asked for on a terminal. Without a terminal a missing one fails, naming its flag, so an
 * unattended run never guesses.
 */
import { createInterface } from "node:readline/promises";
import { Writable } from "node:stream";

/** In the order they are settled: network and settlement decide which of the rest are needed. */
export const OPERATOR_VALUES = [
  { name: "X402_NETWORK", flag: "network", env: "ZEITVAULT_NETWORK" },
  { name: "X402_SETTLEMENT", flag: "settlement", env: "ZEITVAULT_SETTLEMENT" },
  {
    name: "BASE_URL",
    flag: "base-url",
    env: "ZEITVAULT_BASE_URL",
    question: "The service's public origin (e.g. https://api.example.com)",
    normalize: (v) => v.replace(/\/+$/, ""),
  },
  {
    name: "X402_PAY_TO",
    flag: "pay-to",
    env: "ZEITVAULT_PAY_TO",
    question: "The address that receives payments (0x…, one you hold the key of)",
  },
  {
    name: "FACILITATOR_URL",
    flag: "facilitator-url",
    env: "ZEITVAULT_FACILITATOR_URL",
    question: "Your x402 facilitator's URL (https://…)",
    when: (vars) => vars.X402_SETTLEMENT === "facilitator",
  },
  {
    name: "RPC_URL",
    flag: "rpc-url",
    env: "ZEITVAULT_RPC_URL",
    question: "The JSON-RPC endpoint direct settlement submits through (https://…)",
    when: (vars) => vars.X402_SETTLEMENT === "direct",
  },
];

/** The relayer's key is a secret: it goes to Cloudflare, never into wrangler.toml. */
export const RELAYER = {
  name: "RELAYER_PRIVATE_KEY",
  flag: "relayer-private-key",
  env: "ZEITVAULT_RELAYER_PRIVATE_KEY",
  question: "The relayer's private key (0x…, 32 bytes hex; it pays the gas of direct settlement)",
};

export const OPERATOR_FLAGS = Object.fromEntries(
  [...OPERATOR_VALUES, RELAYER].map((v) => [v.flag, { type: "string" }]),
);

const given = (value, flags) => flags[value.flag] ?? process.env[value.env];

async function ask(question, { secret = false } = {}) {
  // A secret is typed into an output that drops everything after the prompt (readline echoes each key).
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stdout.write(chunk);
      done(); // at once, so the prompt's writes pass before the mute
    },
  });
  Object.assign(output, { isTTY: true, columns: process.stdout.columns });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const answer = rl.question(`${question}: `);
    muted = secret;
    return (await answer).trim();
  } finally {
    rl.close();
    if (muted) process.stdout.write("\n");
  }
}

const interactive = () => Boolean(process.stdin.isTTY);

/**
 * Settles the operator's values into `vars` (a copy of the environment's [vars]). `networks` is
 * config-check's NETWORKS: a known network also sets its chain id and USDC contract.
 * @returns {Promise<string[]>} the flags still needed.
 */
export async function settleOperatorValues(vars, flags, networks) {
  const missing = [];
  for (const value of OPERATOR_VALUES) {
    if (value.when && !value.when(vars)) continue;
    let chosen = given(value, flags);
    if (chosen === undefined && !vars[value.name]?.trim() && value.question) {
      if (interactive()) chosen = await ask(value.question);
      else missing.push(`--${value.flag} (or ${value.env}): ${value.question}`);
    }
    if (chosen === undefined) continue;
    vars[value.name] = value.normalize ? value.normalize(chosen.trim()) : chosen.trim();
    const network =
      value.name === "X402_NETWORK" && Object.hasOwn(networks, vars.X402_NETWORK) ? networks[vars.X402_NETWORK] : null;
    if (network)
      Object.assign(vars, {
        X402_CHAIN_ID: String(network.chainId),
        X402_ASSET: network.asset,
        X402_ASSET_NAME: network.assetName,
        X402_ASSET_VERSION: network.assetVersion,
      });
  }
  return missing;
}

/**
 * The relayer's key, when direct settlement needs one that Cloudflare does not have yet (`secrets`:
 * the names it has).
 * @returns {Promise<{ relayerKey?: string, missing: string[] }>}
 */
export async function settleRelayerKey(vars, flags, secrets) {
  if (vars.X402_SETTLEMENT !== "direct" || secrets.has(RELAYER.name)) return { missing: [] };
  let relayerKey = given(RELAYER, flags);
  if (relayerKey === undefined && interactive()) relayerKey = await ask(RELAYER.question, { secret: true });
  if (relayerKey === undefined) return { missing: [`--${RELAYER.flag} (or ${RELAYER.env}): ${RELAYER.question}`] };
  return { relayerKey: relayerKey.trim(), missing: [] };
}

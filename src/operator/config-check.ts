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
import { SETUP, type ConfigProblem, type Settings, type SettingsCheck } from "./config-problem";
import { paymentProblems } from "./config-payment-check";
import { keyProblems } from "./config-key-check";

/** The scripts bundle this file alone (scripts/lib/config-check.mjs) and read the networks from it. */
export { NETWORKS, type NetworkName } from "./config-payment-check";

export function isDevelopmentSetting(environment: string | undefined): boolean {
  return environment === "development" || environment === "test";
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
  const check: SettingsCheck = { settings, staging, add, has, known };

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

  paymentProblems(check);
  keyProblems(check);

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

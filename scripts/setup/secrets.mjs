/**
 * The secrets setup makes for an environment. Only the ones Cloudflare does not have yet are made (a
 * second run makes none, and never rotates a key under a running service); they go up with the deploy
 * (scripts/lib/deploy.mjs). None is ever printed, except a new ADMIN_TOKEN, shown to the operator once
 * because nobody can read it back.
 */
import { adminToken, dataEncryptionKey, oauthKey, tsaKey } from "../lib/keys.mjs";

/** What each generated secret is, for the plan. */
const GENERATED = {
  OAUTH_PRIVATE_JWK: "RS256 signing key",
  TSA_PRIVATE_JWK: "the notary's EC P-256 key",
  TSA_CERT_PEM: "its self-signed TSA certificate",
  DATA_ENCRYPTION_KEY: "32 random bytes, base64",
  ADMIN_TOKEN: "the operator endpoints' bearer token",
};

export const GENERATED_SECRETS = Object.keys(GENERATED);

/**
 * The names of the secrets to upload: the generated ones Cloudflare lacks (the TSA key and certificate
 * only as a pair: a certificate cannot be made for a key nobody can read back), and the relayer's key
 * when one was given.
 */
export function secretsToUpload(existing, relayerKey) {
  const names = Object.keys(GENERATED).filter((name) => !existing.has(name));
  if (names.includes("TSA_PRIVATE_JWK") !== names.includes("TSA_CERT_PEM"))
    names.push(names.includes("TSA_PRIVATE_JWK") ? "TSA_CERT_PEM" : "TSA_PRIVATE_JWK");
  if (relayerKey !== undefined) names.push("RELAYER_PRIVATE_KEY");
  return names;
}

export const describeSecret = (name) =>
  name === "RELAYER_PRIVATE_KEY" ? "given by the operator" : `generated: ${GENERATED[name]}`;

/** The values of the named secrets: made here, or the relayer's key as given. */
export async function makeSecrets(names, { tsaName, relayerKey }) {
  const values = {};
  if (names.includes("OAUTH_PRIVATE_JWK")) values.OAUTH_PRIVATE_JWK = (await oauthKey()).secret;
  if (names.includes("TSA_PRIVATE_JWK")) {
    const tsa = await tsaKey(tsaName);
    Object.assign(values, { TSA_PRIVATE_JWK: tsa.secret, TSA_CERT_PEM: tsa.pem });
  }
  if (names.includes("DATA_ENCRYPTION_KEY")) values.DATA_ENCRYPTION_KEY = dataEncryptionKey();
  if (names.includes("ADMIN_TOKEN")) values.ADMIN_TOKEN = adminToken();
  if (names.includes("RELAYER_PRIVATE_KEY")) values.RELAYER_PRIVATE_KEY = relayerKey;
  return values;
}

/** The new ADMIN_TOKEN, once it is in place: nobody can read it back, so this is the operator's only sight of it. */
export function showAdminToken(values) {
  if (!values.ADMIN_TOKEN) return;
  console.log("\nADMIN_TOKEN, the bearer token of the operator endpoints (/v1/admin/…). It is shown this once and");
  console.log("cannot be read back: keep it in your password manager.\n");
  console.log(`  ${values.ADMIN_TOKEN}\n`);
}

/**
 * The keys part of config-check.ts: the signing keys (access tokens, receipts, attestations), the
 * notary's, and the key that encrypts secrets at rest, each present and of the right shape.
 */
import type { SettingsCheck } from "./config-problem";

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

/** The keys: signing (access tokens, receipts, attestations), the notary's, and encryption at rest. */
export function keyProblems(check: SettingsCheck): void {
  const { add, has, known } = check;
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
}

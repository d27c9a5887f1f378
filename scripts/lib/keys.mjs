/**
 * The service's generated secrets, made in one place for `npm run keys:generate` (which prints them)
 * and `npm run setup` (which uploads them): the RS256 signing key, the notary's TSA key with its
 * certificate, the at-rest encryption key and the operator's token.
 */
import { randomBytes } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from "jose";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";

/**
 * The RS256 private JWK (with its thumbprint as kid) signing access tokens, receipts and attestations:
 * OAUTH_PRIVATE_JWK.
 */
export async function oauthKey() {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    kid,
    secret: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" }),
    publicJwk: { ...publicJwk, kid, alg: "RS256", use: "sig" },
  };
}

/**
 * The notary's key (TSA_PRIVATE_JWK) and its certificate (TSA_CERT_PEM), as
 * src/kinds/time/notary/tsa-certificate.ts makes it (the scripts run without a TypeScript loader):
 * self-signed, ten years, extendedKeyUsage timeStamping marked critical, and no keyUsage, which
 * `openssl ts -verify` would otherwise need without keyCertSign while its chain building needs
 * keyCertSign to take the certificate as its own issuer.
 */
export async function tsaKey(commonName) {
  const { privateKey, publicKey } = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const { kty, crv, x, y, d } = await crypto.subtle.exportKey("jwk", privateKey);
  const cert = new pkijs.Certificate();
  cert.version = 2;
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0] & 0x3f) | 0x40; // positive, no leading zero
  cert.serialNumber = new asn1js.Integer({ valueHex: serial.buffer });
  for (const name of [cert.subject, cert.issuer])
    name.typesAndValues.push(
      new pkijs.AttributeTypeAndValue({ type: "2.5.4.3", value: new asn1js.Utf8String({ value: commonName }) }),
    );
  const now = Date.now();
  cert.notBefore = new pkijs.Time({ type: pkijs.TimeType.UTCTime, value: new Date(now - 3600_000) });
  cert.notAfter = new pkijs.Time({ type: pkijs.TimeType.UTCTime, value: new Date(now + 3650 * 86400_000) });
  cert.extensions = [
    new pkijs.Extension({
      extnID: "2.5.29.37",
      critical: true,
      extnValue: new pkijs.ExtKeyUsage({ keyPurposes: ["1.3.6.1.5.5.7.3.8"] }).toSchema().toBER(false),
    }),
  ];
  await cert.subjectPublicKeyInfo.importKey(publicKey);
  await cert.sign(privateKey, "SHA-256");
  const lines = Buffer.from(cert.toSchema(true).toBER(false))
    .toString("base64")
    .match(/.{1,64}/g);
  return {
    secret: JSON.stringify({ kty, crv, x, y, d }),
    pem: `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`,
  };
}

/** DATA_ENCRYPTION_KEY: 32 random bytes, base64 (AES-256-GCM for secrets kept at rest). */
export const dataEncryptionKey = () => randomBytes(32).toString("base64");

/** ADMIN_TOKEN: 32 random bytes, base64url (43 characters): far past config-check's strength bar. */
export const adminToken = () => randomBytes(32).toString("base64url");

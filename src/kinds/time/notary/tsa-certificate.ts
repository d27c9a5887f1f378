/**
 * The TSA's key and certificate: how a JWK becomes signing and verifying keys, how a
 * self-signed TSA certificate is made (development, tests), and what a configured one
 * must satisfy. `openssl ts -verify` accepts a signer only if its certificate has
 * extendedKeyUsage timeStamping alone, marked critical, and a keyUsage (if any) without
 * keyCertSign; a self-signed certificate therefore carries no keyUsage at all, since
 * without keyCertSign OpenSSL would not treat it as its own issuer.
 */
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { fromBase64, toBase64 } from "../../../bytes";
import { arrayBuffer, unsignedInteger } from "./bytes";

export const ID_KP_TIME_STAMPING = "1.3.6.1.5.5.7.3.8";
const ID_CE_EXT_KEY_USAGE = "2.5.29.37";
const ID_AT_COMMON_NAME = "2.5.4.3";
/** Long enough that old stamps keep verifying: OpenSSL checks the certificate at verification time. */
export const CERTIFICATE_DAYS = 3650;

export interface TsaKeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/** ECDSA P-256 (the default: small tokens, fast keys) or RSA PKCS#1 v1.5; both sign SHA-256. */
export function keyAlgorithm(jwk: JsonWebKey): SubtleCryptoImportKeyAlgorithm {
  if (jwk.kty === "EC" && jwk.crv === "P-256") return { name: "ECDSA", namedCurve: "P-256" };
  if (jwk.kty === "RSA") return { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  throw new Error("the TSA key must be an EC P-256 or RSA private JWK");
}

const PRIVATE_MEMBERS = new Set(["d", "p", "q", "dp", "dq", "qi", "oth", "key_ops"]);

export async function importTsaKeys(jwk: JsonWebKey): Promise<TsaKeyPair> {
  if (!jwk.d) throw new Error("the TSA key must be a private JWK (with d)");
  const algorithm = keyAlgorithm(jwk);
  const publicJwk = Object.fromEntries(Object.entries(jwk).filter(([k]) => !PRIVATE_MEMBERS.has(k))) as JsonWebKey;
  const [privateKey, publicKey] = await Promise.all([
    crypto.subtle.importKey("jwk", { ...jwk, key_ops: ["sign"] }, algorithm, false, ["sign"]),
    crypto.subtle.importKey("jwk", publicJwk, algorithm, true, ["verify"]),
  ]);
  return { privateKey, publicKey };
}

/** A fresh ECDSA P-256 key, as the private JWK a secret holds. */
export async function generateTsaJwk(): Promise<JsonWebKey> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const { kty, crv, x, y, d } = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  return { kty, crv, x, y, d };
}

/** A positive serial of 126 random bits (top byte 0x40–0x7f: no sign byte, no leading zero). */
export function randomSerial(): Uint8Array {
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0]! & 0x3f) | 0x40;
  return serial;
}

export async function selfSignedTsaCertificate(
  keys: TsaKeyPair,
  commonName: string,
  now = Date.now(),
): Promise<Uint8Array> {
  const cert = new pkijs.Certificate();
  cert.version = 2; // v3
  cert.serialNumber = new asn1js.Integer({ valueHex: arrayBuffer(unsignedInteger(randomSerial())) });
  const name = () =>
    new pkijs.AttributeTypeAndValue({ type: ID_AT_COMMON_NAME, value: new asn1js.Utf8String({ value: commonName }) });
  cert.subject.typesAndValues.push(name());
  cert.issuer.typesAndValues.push(name());
  // An hour back, for verifiers whose clocks run behind.
  cert.notBefore = new pkijs.Time({ type: pkijs.TimeType.UTCTime, value: new Date(now - 3600_000) });
  cert.notAfter = new pkijs.Time({ type: pkijs.TimeType.UTCTime, value: new Date(now + CERTIFICATE_DAYS * 86400_000) });
  cert.extensions = [
    new pkijs.Extension({
      extnID: ID_CE_EXT_KEY_USAGE,
      critical: true,
      extnValue: new pkijs.ExtKeyUsage({ keyPurposes: [ID_KP_TIME_STAMPING] }).toSchema().toBER(false),
    }),
  ];
  await cert.subjectPublicKeyInfo.importKey(keys.publicKey);
  await cert.sign(keys.privateKey, "SHA-256");
  return new Uint8Array(cert.toSchema(true).toBER(false));
}

export function derToPem(der: Uint8Array): string {
  const lines = toBase64(der).match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

/** Reads a PEM certificate, or bare base64 DER (a secret pasted without its armour or line breaks). */
export function pemToDer(text: string): Uint8Array {
  const armoured = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(text);
  // Literal "\n" sequences too: a PEM kept on one line in a .dev.vars or CI variable.
  return fromBase64((armoured ? armoured[1]! : text).replace(/\\n|\s/g, ""));
}

export function parseCertificate(der: Uint8Array): pkijs.Certificate {
  return pkijs.Certificate.fromBER(arrayBuffer(der));
}

/**
 * Refuses a configured certificate that verifiers would reject or that does not belong
 * to the key: better a clear error at the first stamp than tokens nobody can verify.
 */
export async function checkTsaCertificate(
  cert: pkijs.Certificate,
  publicKey: CryptoKey,
  now = Date.now(),
): Promise<void> {
  const eku = cert.extensions?.find((e) => e.extnID === ID_CE_EXT_KEY_USAGE);
  const purposes = eku?.parsedValue instanceof pkijs.ExtKeyUsage ? eku.parsedValue.keyPurposes : [];
  if (!eku?.critical || purposes.length !== 1 || purposes[0] !== ID_KP_TIME_STAMPING) {
    throw new Error("TSA_CERT_PEM must have a critical extendedKeyUsage of timeStamping only");
  }
  if (cert.notAfter.value.getTime() < now) throw new Error("TSA_CERT_PEM has expired");
  const configured = new Uint8Array((await crypto.subtle.exportKey("spki", publicKey)) as ArrayBuffer);
  const certified = new Uint8Array(cert.subjectPublicKeyInfo.toSchema().toBER(false));
  if (configured.length !== certified.length || configured.some((b, i) => b !== certified[i])) {
    throw new Error("TSA_CERT_PEM does not certify the key in TSA_PRIVATE_JWK");
  }
}

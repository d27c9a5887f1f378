/**
 * The TSA signer: its private key and certificate. Production takes them from the
 * secrets TSA_PRIVATE_JWK and TSA_CERT_PEM (`npm run keys:generate -- --tsa`) and
 * refuses to stamp without them. Outside production a missing pair is replaced by a
 * key and self-signed certificate generated for the life of the isolate (as the
 * OAuth signing key is), so `npm run dev` stamps without setup; such tokens verify
 * only against the certificate that isolate published.
 */
import type * as pkijs from "pkijs";
import { sha256 } from "../../../bytes";
import { isDevelopment, type Env } from "../../../env";
import {
  derToPem,
  checkTsaCertificate,
  generateTsaJwk,
  importTsaKeys,
  parseCertificate,
  pemToDer,
  selfSignedTsaCertificate,
} from "./tsa-certificate";

export interface TsaSigner {
  privateKey: CryptoKey;
  certificate: pkijs.Certificate;
  certificateDer: Uint8Array;
  certificatePem: string;
  /** SHA-256 of the certificate's DER: ESSCertIDv2 names the signer by it. */
  certificateHash: Uint8Array;
}

export interface TsaSecrets {
  TSA_PRIVATE_JWK: string;
  TSA_CERT_PEM: string;
}

const cache = new Map<string, Promise<TsaSigner>>();
let devSigner: Promise<TsaSigner> | undefined;

async function load(secrets: TsaSecrets, checked: boolean): Promise<TsaSigner> {
  const keys = await importTsaKeys(JSON.parse(secrets.TSA_PRIVATE_JWK) as JsonWebKey);
  const certificateDer = pemToDer(secrets.TSA_CERT_PEM);
  const certificate = parseCertificate(certificateDer);
  if (checked) await checkTsaCertificate(certificate, keys.publicKey);
  return {
    privateKey: keys.privateKey,
    certificate,
    certificateDer,
    certificatePem: derToPem(certificateDer),
    certificateHash: sha256(certificateDer),
  };
}

/** A fresh key and self-signed TSA certificate, as the two secrets hold them (tests configure these). */
export async function generateTsaSecrets(commonName: string): Promise<TsaSecrets> {
  const jwk = await generateTsaJwk();
  const der = await selfSignedTsaCertificate(await importTsaKeys(jwk), commonName);
  return { TSA_PRIVATE_JWK: JSON.stringify(jwk), TSA_CERT_PEM: derToPem(der) };
}

async function generateDevSigner(serviceName: string): Promise<TsaSigner> {
  console.warn(
    "TSA_PRIVATE_JWK / TSA_CERT_PEM are not set: stamping with a key and certificate generated for this " +
      "isolate (development only).",
  );
  return load(await generateTsaSecrets(`${serviceName} development TSA`), false);
}

export function tsaSigner(env: Env): Promise<TsaSigner> {
  if (env.TSA_PRIVATE_JWK && env.TSA_CERT_PEM) {
    const key = `${env.TSA_PRIVATE_JWK}\n${env.TSA_CERT_PEM}`;
    let signer = cache.get(key);
    if (!signer) {
      signer = load({ TSA_PRIVATE_JWK: env.TSA_PRIVATE_JWK, TSA_CERT_PEM: env.TSA_CERT_PEM }, true);
      cache.set(key, signer);
    }
    return signer;
  }
  if (!isDevelopment(env)) return Promise.reject(new Error("TSA_PRIVATE_JWK and TSA_CERT_PEM are not configured"));
  return (devSigner ??= generateDevSigner(env.SERVICE_NAME || "zeitvault"));
}

/**
 * The TSA policy OID stamped into every TSTInfo: TSA_POLICY_OID, else ours. Ours sits
 * under 2.25, the arc of ITU-T X.667 where a UUID is an OID anyone may use without
 * registration: 2.25.<UUID fe5a17ca-48b6-4ef5-b49e-52cc0b223d37 as a decimal integer>,
 * and below it .1 for version 1 of the policy (published in docs/kinds.md).
 */
export const DEFAULT_POLICY_OID = "2.25.338091700168649796157310283022103362871.1";

export function tsaPolicy(env: Pick<Env, "TSA_POLICY_OID">): string {
  const oid = env.TSA_POLICY_OID || DEFAULT_POLICY_OID;
  if (!/^[0-2](\.(0|[1-9]\d*))+$/.test(oid))
    throw new Error("TSA_POLICY_OID must be a dotted OID such as 1.3.6.1.4.1.99999.1");
  return oid;
}

/**
 * RFC 3161 time-stamp responses, built with pkijs: a TimeStampResp with status
 * granted and a TimeStampToken, i.e. CMS SignedData (RFC 5652) over a TSTInfo.
 * The signed attributes are contentType (id-ct-TSTInfo), messageDigest and
 * signingCertificateV2 (RFC 5035), which names the signer's certificate by its
 * SHA-256 and which `openssl ts -verify` requires. The TSA certificate travels in
 * the SignedData, so a verifier needs only it as a trust anchor.
 */
import * as asn1js from "asn1js";
import { sha256 } from "../../../bytes";
import * as pkijs from "pkijs";
import { arrayBuffer } from "./bytes";
import type { TsaSigner } from "./tsa-signer";

const ID_SIGNED_DATA = "1.2.840.113549.1.7.2";
const ID_CT_TSTINFO = "1.2.840.113549.1.9.16.1.4";
const ID_SHA256 = "2.16.840.1.101.3.4.2.1";
const ID_AA_CONTENT_TYPE = "1.2.840.113549.1.9.3";
const ID_AA_MESSAGE_DIGEST = "1.2.840.113549.1.9.4";
const ID_AA_SIGNING_CERTIFICATE_V2 = "1.2.840.113549.1.9.16.2.47";
/** GeneralName's directoryName choice. */
const DIRECTORY_NAME = 4;

export interface StampFields {
  policy: string;
  /** The messageImprint: a SHA-256 digest. */
  sha256: Uint8Array;
  /** Contents of a positive DER INTEGER (see unsignedInteger). */
  serial: Uint8Array;
  /** Unix ms; encoded with its milliseconds, trailing zeros dropped as DER wants. */
  genTime: number;
  nonce: Uint8Array | null;
}

const octets = (bytes: Uint8Array) => new asn1js.OctetString({ valueHex: arrayBuffer(bytes) });

function tstInfo(f: StampFields): Uint8Array {
  const info = new pkijs.TSTInfo({
    version: 1,
    policy: f.policy,
    // Parameters absent, as RFC 5754 prefers for SHA-2.
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: ID_SHA256 }),
      hashedMessage: octets(f.sha256),
    }),
    serialNumber: new asn1js.Integer({ valueHex: arrayBuffer(f.serial) }),
    genTime: new Date(f.genTime),
    // A Worker's clock is NTP-disciplined; one second is an honest bound for what it reads.
    accuracy: new pkijs.Accuracy({ seconds: 1 }),
    ...(f.nonce ? { nonce: new asn1js.Integer({ valueHex: arrayBuffer(f.nonce) }) } : {}),
  });
  return new Uint8Array(info.toSchema().toBER(false));
}

/**
 * SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF ESSCertIDv2 }
 * ESSCertIDv2 ::= SEQUENCE { certHash OCTET STRING, issuerSerial IssuerSerial }
 * hashAlgorithm is left out: its DEFAULT is SHA-256, and DER omits defaults.
 */
function signingCertificateV2(signer: TsaSigner): asn1js.Sequence {
  const issuer = new pkijs.GeneralNames({
    names: [new pkijs.GeneralName({ type: DIRECTORY_NAME, value: signer.certificate.issuer })],
  });
  const issuerSerial = new asn1js.Sequence({ value: [issuer.toSchema(), signer.certificate.serialNumber] });
  const essCertId = new asn1js.Sequence({ value: [octets(signer.certificateHash), issuerSerial] });
  return new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertId] })] });
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** SignedAttributes is a SET OF: DER orders its members by their encodings. */
function signedAttributes(attributes: pkijs.Attribute[]): pkijs.SignedAndUnsignedAttributes {
  const encoded = attributes.map((a) => ({ a, der: new Uint8Array(a.toSchema().toBER(false)) }));
  encoded.sort((x, y) => compareBytes(x.der, y.der));
  return new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes: encoded.map((e) => e.a) });
}

/** Signs one stamp; returns the DER TimeStampResp (what a `.tsr` file holds). */
export async function timeStampResponse(signer: TsaSigner, fields: StampFields): Promise<Uint8Array> {
  const content = tstInfo(fields);
  const attribute = (type: string, value: asn1js.BaseBlock) => new pkijs.Attribute({ type, values: [value] });
  const signedData = new pkijs.SignedData({
    version: 3, // eContentType is not id-data (RFC 5652 §5.1)
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: ID_CT_TSTINFO, eContent: octets(content) }),
    certificates: [signer.certificate],
    signerInfos: [
      new pkijs.SignerInfo({
        version: 1,
        sid: new pkijs.IssuerAndSerialNumber({
          issuer: signer.certificate.issuer,
          serialNumber: signer.certificate.serialNumber,
        }),
        signedAttrs: signedAttributes([
          attribute(ID_AA_CONTENT_TYPE, new asn1js.ObjectIdentifier({ value: ID_CT_TSTINFO })),
          attribute(ID_AA_MESSAGE_DIGEST, octets(sha256(content))),
          attribute(ID_AA_SIGNING_CERTIFICATE_V2, signingCertificateV2(signer)),
        ]),
      }),
    ],
  });
  await signedData.sign(signer.privateKey, 0, "SHA-256");
  const response = new pkijs.TimeStampResp({
    status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.granted }),
    timeStampToken: new pkijs.ContentInfo({ contentType: ID_SIGNED_DATA, content: signedData.toSchema(true) }),
  });
  return new Uint8Array(response.toSchema().toBER(false));
}

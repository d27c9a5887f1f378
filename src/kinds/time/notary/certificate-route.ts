/**
 * The TSA certificate, published free and without credentials: verifiers pass it to
 * `openssl ts -verify -CAfile`. Under /v1/tsa/, apart from /v1/notary/{id}, because it
 * belongs to the service, not to any one notary resource.
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { errorResponses } from "../../../openapi/responses";
import { TAGS } from "../../../openapi/tags";
import { arrayBuffer } from "./bytes";
import { tsaSigner } from "./tsa-signer";

// Certificates change only on rotation; an hour of caching keeps verifiers off the API.
const CACHE = "public, max-age=3600";
const VERIFY_HINT =
  "Verify a stamp with `openssl ts -verify -in stamp.tsr -digest <sha256> -CAfile tsa.pem`. The " +
  "certificate is self-signed, with a critical extendedKeyUsage of timeStamping; every token also carries " +
  "it, and names it by SHA-256 in its signingCertificateV2 attribute. Outside production it is generated " +
  "per isolate.";

const pemRoute = createRoute({
  method: "get",
  path: "/v1/tsa/certificate.pem",
  tags: [TAGS.time],
  operationId: "tsa_certificate_pem",
  security: [],
  summary: "The notary's TSA certificate, PEM (free)",
  description: VERIFY_HINT,
  responses: {
    200: {
      description: "The X.509 certificate, PEM.",
      content: { "application/pem-certificate-chain": { schema: z.string() } },
    },
    ...errorResponses([]),
  },
});

const derRoute = createRoute({
  method: "get",
  path: "/v1/tsa/certificate.der",
  tags: [TAGS.time],
  operationId: "tsa_certificate_der",
  security: [],
  summary: "The notary's TSA certificate, DER (free)",
  description: VERIFY_HINT,
  responses: {
    200: {
      description: "The X.509 certificate, DER.",
      content: { "application/pkix-cert": { schema: z.string().openapi({ format: "binary" }) } },
    },
    ...errorResponses([]),
  },
});

export function registerTsaRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(pemRoute, async (c) => {
    const signer = await tsaSigner(c.env);
    return c.body(signer.certificatePem, 200, {
      "Content-Type": "application/pem-certificate-chain",
      "Cache-Control": CACHE,
    });
  });
  app.openapi(derRoute, async (c) => {
    const signer = await tsaSigner(c.env);
    return c.body(arrayBuffer(signer.certificateDer), 200, {
      "Content-Type": "application/pkix-cert",
      "Cache-Control": CACHE,
    });
  });
}

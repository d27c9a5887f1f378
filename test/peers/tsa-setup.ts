/**
 * vitest globalSetup (Node): the notary's TSA key and self-signed certificate, made once
 * per run and configured as the TSA_PRIVATE_JWK / TSA_CERT_PEM secrets, as in production.
 * Made here rather than in vitest.config.ts, which Vite loads before it resolves the
 * extensionless imports of src/.
 */
import type { TestProject } from "vitest/node";
import { generateTsaSecrets, type TsaSecrets } from "../../src/kinds/time/notary/tsa-signer";

declare module "vitest" {
  export interface ProvidedContext {
    tsaSecrets: TsaSecrets;
  }
}

export default async function setup(project: TestProject) {
  project.provide("tsaSecrets", await generateTsaSecrets("zeitvault test TSA"));
}

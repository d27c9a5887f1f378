/** vitest globalSetup (Node): the local OpenSSL peer that checks the notary's tokens with `openssl ts -verify`. */
import type { TestProject } from "vitest/node";
import { startOpensslPeer } from "./openssl";

declare module "vitest" {
  export interface ProvidedContext {
    opensslUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const peer = await startOpensslPeer();
  project.provide("opensslUrl", peer.url);
  return peer.stop;
}

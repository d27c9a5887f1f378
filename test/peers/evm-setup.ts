/** vitest globalSetup (runs in Node): starts the local EVM peer and hands its coordinates to the workers. */
import type { TestProject } from "vitest/node";
import { startEvmPeer, type EvmPeer } from "./evm";

export type EvmPeerInfo = Omit<EvmPeer, "stop">;

declare module "vitest" {
  export interface ProvidedContext {
    evm: EvmPeerInfo;
  }
}

export default async function setup(project: TestProject) {
  const { stop, ...info } = await startEvmPeer();
  project.provide("evm", info);
  return stop;
}

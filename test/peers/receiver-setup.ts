/** vitest globalSetup (Node): the local webhook receiver for the worker tests. */
import type { TestProject } from "vitest/node";
import { startReceiver } from "./receiver";

declare module "vitest" {
  export interface ProvidedContext {
    receiverUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const receiver = await startReceiver();
  project.provide("receiverUrl", receiver.url);
  return receiver.stop;
}

/**
 * vitest globalSetup (Node): the local engines (scripts/engines.mjs: Debian's chromium behind
 * Gotenberg's routes) for the worker tests, and poppler-utils to read what they make.
 */
import type { TestProject } from "vitest/node";
import { startEngines } from "../../scripts/engines.mjs";
import { chromiumPath } from "./chromium";
import { startPopplerPeer } from "./poppler";

declare module "vitest" {
  export interface ProvidedContext {
    engineUrl: string;
    popplerUrl: string;
  }
}

export default async function setup(project: TestProject) {
  chromiumPath(); // installs Debian's chromium when missing, or names the command that does
  const [engines, poppler] = await Promise.all([startEngines(), startPopplerPeer()]);
  project.provide("engineUrl", engines.url);
  project.provide("popplerUrl", poppler.url);
  return async () => {
    await Promise.all([engines.stop(), poppler.stop()]);
  };
}

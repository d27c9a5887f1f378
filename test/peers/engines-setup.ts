/**
 * vitest globalSetup (Node): the local engines (scripts/engines.mjs: Debian's chromium behind Gotenberg's routes,
 * LibreOffice behind Gotenberg's, tesseract for OCR) for the worker tests, and poppler-utils to read what they make.
 */
import type { TestProject } from "vitest/node";
import { ENGINES, startEngines } from "../../scripts/engines.mjs";
import { chromiumPath } from "./chromium";
import { debianFile } from "./debian";
import { startPopplerPeer } from "./poppler";

declare module "vitest" {
  export interface ProvidedContext {
    engineUrl: string;
    popplerUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // Installed when missing, or the failure names the command that does.
  chromiumPath();
  // The packages are engines/debian-packages.txt's, as CI and the engines image install them.
  debianFile(ENGINES.tesseract.file, ENGINES.tesseract.packages, "the OCR engine");
  debianFile(ENGINES.libreoffice.file, ENGINES.libreoffice.packages, "converting office documents");
  const [engines, poppler] = await Promise.all([startEngines(), startPopplerPeer()]);
  project.provide("engineUrl", engines.url);
  project.provide("popplerUrl", poppler.url);
  return async () => {
    await Promise.all([engines.stop(), poppler.stop()]);
  };
}

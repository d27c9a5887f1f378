/** vitest globalSetup (Node): the local SMTP server for notify's mailto:// channel. */
import type { TestProject } from "vitest/node";
import { startSmtp } from "./smtp";

declare module "vitest" {
  export interface ProvidedContext {
    smtp: { host: string; logUrl: string };
  }
}

export default async function setup(project: TestProject) {
  const smtp = await startSmtp();
  project.provide("smtp", { host: smtp.host, logUrl: smtp.logUrl });
  return smtp.stop;
}

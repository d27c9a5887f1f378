/**
 * vitest globalSetup (Node): Debian's tinyproxy as the operator's egress proxy for egress-connectors
 * (scripts/egress-proxy.mjs), sending from 127.0.0.2 so the receiver can tell a request that came
 * through it. Installed when missing, or the failure names the command that does.
 */
import type { TestProject } from "vitest/node";
import { startEgressProxy, TINYPROXY, TINYPROXY_PACKAGES } from "../../scripts/egress-proxy.mjs";
import { debianFile } from "./debian";

declare module "vitest" {
  export interface ProvidedContext {
    egressProxy: { url: string; ips: string };
  }
}

export default async function setup(project: TestProject) {
  debianFile(TINYPROXY, TINYPROXY_PACKAGES, "egress-connectors' forward proxy");
  const proxy = await startEgressProxy({ bind: "127.0.0.2" });
  if (proxy.missing)
    throw new Error(
      `the egress proxy did not start: ${proxy.why}` +
        `${proxy.installHint ? `; install it with: ${proxy.installHint}` : ""}`,
    );
  project.provide("egressProxy", { url: proxy.url!, ips: proxy.ips! });
  return proxy.stop;
}

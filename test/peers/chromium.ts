/**
 * Debian's Chromium for tests of pages meant for people, driven by playwright-core (which
 * must not download a browser of its own); installed when missing (debian.ts).
 */
import { chromium, type Browser } from "playwright-core";
import { debianFile } from "./debian";

export const chromiumPath = (): string =>
  debianFile("/usr/bin/chromium", ["chromium"], "the page tests and the local PDF engine");

/** Headless, with the flags this machine's closed network needs (no background calls home). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Settlement configuration: `none` is for development only, and `direct` needs its chain settings. */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { settlerFor } from "../../src/money/x402/settle";

it("refuses X402_SETTLEMENT=none outside development, and direct without RPC_URL or a relayer key", () => {
  expect(() => settlerFor({ ...env, ENVIRONMENT: "production", X402_SETTLEMENT: "none" })).toThrow(
    /refused unless ENVIRONMENT is development/,
  );
  // Fails closed: anything but an explicit development or test environment.
  expect(() => settlerFor({ ...env, ENVIRONMENT: "staging", X402_SETTLEMENT: "none" })).toThrow(/refused/);
  expect(() => settlerFor({ ...env, X402_SETTLEMENT: "direct", RPC_URL: "" })).toThrow(
    /RPC_URL and RELAYER_PRIVATE_KEY/,
  );
  expect(() => settlerFor({ ...env, X402_SETTLEMENT: "sometimes" })).toThrow(/Unknown X402_SETTLEMENT/);
  expect(settlerFor({ ...env, X402_SETTLEMENT: "none" })).toBeDefined();
});

/** `npm run keys:generate` prints a usable RS256 private JWK with a kid. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { importJWK, SignJWT, jwtVerify } from "jose";
import { expect, it } from "vitest";

it("keys:generate prints a private JWK that signs, and whose public half verifies", async () => {
  const { stdout, stderr } = await promisify(execFile)("node", ["scripts/keys-generate.mjs"]);
  const jwk = JSON.parse(stdout);
  expect(jwk).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", kid: expect.any(String), d: expect.any(String) });
  const publicJwk = JSON.parse(stderr.slice(stderr.indexOf("{")));
  expect(publicJwk.d).toBeUndefined();
  const jwt = await new SignJWT({}).setProtectedHeader({ alg: "RS256" }).sign(await importJWK(jwk, "RS256"));
  await expect(jwtVerify(jwt, await importJWK(publicJwk, "RS256"))).resolves.toBeDefined();
});

/**
 * `npm run keys:generate -- --tsa` makes a TSA key and certificate that the notary
 * accepts as its production secrets, and whose stamps `openssl ts -verify` accepts.
 * (The script builds the certificate in plain JS; this keeps it equal to the worker's.)
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { sha256 } from "viem";
import type { Env } from "../../src/env";
import { timeStampResponse } from "../../src/kinds/time/notary/rfc3161";
import { randomSerial } from "../../src/kinds/time/notary/tsa-certificate";
import { DEFAULT_POLICY_OID, tsaSigner } from "../../src/kinds/time/notary/tsa-signer";

const run = promisify(execFile);

it("keys:generate --tsa prints a key whose certificate the notary accepts and openssl verifies", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "zeitvault-tsa-"));
  const certFile = path.join(dir, "tsa.pem");
  const { stdout } = await run("node", [
    "scripts/keys-generate.mjs",
    "--tsa",
    "--cert-out",
    certFile,
    "--name",
    "example",
  ]);
  const pem = await readFile(certFile, "utf8");
  expect(JSON.parse(stdout)).toMatchObject({ kty: "EC", crv: "P-256", d: expect.any(String) });

  const purpose = await run("openssl", ["x509", "-in", certFile, "-noout", "-subject", "-purpose"]);
  expect(purpose.stdout).toContain("CN = example TSA");
  expect(purpose.stdout).toContain("Time Stamp signing : Yes");

  // Loaded as production loads it: the certificate is checked against the key.
  const signer = await tsaSigner({
    ENVIRONMENT: "production",
    TSA_PRIVATE_JWK: stdout.trim(),
    TSA_CERT_PEM: pem,
  } as Env);
  const digest = sha256(new TextEncoder().encode("script"), "bytes");
  const tsr = await timeStampResponse(signer, {
    policy: DEFAULT_POLICY_OID,
    sha256: digest,
    serial: randomSerial(),
    genTime: Date.now(),
    nonce: null,
  });
  await writeFile(path.join(dir, "stamp.tsr"), tsr);
  const verify = await run("openssl", [
    "ts",
    "-verify",
    "-in",
    path.join(dir, "stamp.tsr"),
    "-digest",
    Buffer.from(digest).toString("hex"),
    "-CAfile",
    certFile,
  ]);
  expect(verify.stdout).toContain("Verification: OK");
});

#!/usr/bin/env node
// Prints a fresh RS256 key pair for signing access tokens, receipts and attestations.
//   npm run keys:generate                 print the private JWK (the secret) and its public half
//   npm run keys:generate -- --dev-vars   also write it to .dev.vars for `npm run dev`
// Rotation: set the new key as OAUTH_NEXT_PRIVATE_JWK first (it is published in the JWKS), wait
// longer than the verifiers' JWKS cache (and an access token's hour), then make it OAUTH_PRIVATE_JWK.
import { appendFile, readFile } from "node:fs/promises";
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from "jose";

const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
const publicJwk = await exportJWK(publicKey);
const kid = await calculateJwkThumbprint(publicJwk);
const secret = JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" });

if (process.argv.includes("--dev-vars")) {
  const existing = await readFile(".dev.vars", "utf8").catch(() => "");
  if (/^OAUTH_PRIVATE_JWK=/m.test(existing)) {
    console.error(".dev.vars already has OAUTH_PRIVATE_JWK; left as it is.");
  } else {
    await appendFile(".dev.vars", `${existing && !existing.endsWith("\n") ? "\n" : ""}OAUTH_PRIVATE_JWK='${secret}'\n`);
    console.error(`wrote OAUTH_PRIVATE_JWK (kid ${kid}) to .dev.vars`);
  }
} else {
  console.error(`kid: ${kid}\nSet the line below as a secret:  npx wrangler secret put OAUTH_PRIVATE_JWK  (paste it)\n`);
  console.log(secret);
  console.error(`\npublic JWK (as published at /.well-known/jwks.json):\n${JSON.stringify({ ...publicJwk, kid, alg: "RS256", use: "sig" })}`);
}

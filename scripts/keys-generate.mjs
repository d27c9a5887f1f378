#!/usr/bin/env node
// Prints fresh keys for the service's secrets.
//   npm run keys:generate                 the RS256 private JWK signing access tokens, receipts and attestations
//                                         (the secret, on stdout) and its public half (on stderr)
//   npm run keys:generate -- --tsa the notary's TSA key instead: an EC P-256 private JWK on stdout (TSA_PRIVATE_JWK)
//   and its self-signed TSA certificate written to tsa-certificate.pem (TSA_CERT_PEM; `--cert-out FILE` to choose the
//   file, `--name NAME` for its CN) npm run keys:generate -- --dev-vars write both to .dev.vars for `npm run dev` (each
//   only where not set yet) Rotation: set the new key as OAUTH_NEXT_PRIVATE_JWK first (it is published in the JWKS),
//   wait longer than the verifiers' JWKS cache (and an access token's hour), then make it OAUTH_PRIVATE_JWK.
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { oauthKey, tsaKey } from "./lib/keys.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? (args[args.indexOf(name) + 1] ?? fallback) : fallback);

const tsaName = `${option("--name", "zeitvault")} TSA`;

if (args.includes("--dev-vars")) {
  let existing = await readFile(".dev.vars", "utf8").catch(() => "");
  const add = async (name, line, what) => {
    if (new RegExp(`^${name}=`, "m").test(existing))
      return console.error(`.dev.vars already has ${name}; left as it is.`);
    const text = `${existing && !existing.endsWith("\n") ? "\n" : ""}${line}\n`;
    await appendFile(".dev.vars", text);
    existing += text;
    console.error(`wrote ${name} (${what}) to .dev.vars`);
  };
  const oauth = await oauthKey();
  await add("OAUTH_PRIVATE_JWK", `OAUTH_PRIVATE_JWK='${oauth.secret}'`, `kid ${oauth.kid}`);
  const tsa = await tsaKey(tsaName);
  await add("TSA_PRIVATE_JWK", `TSA_PRIVATE_JWK='${tsa.secret}'`, "EC P-256");
  // One line: dotenv turns \n inside double quotes into line breaks.
  await add("TSA_CERT_PEM", `TSA_CERT_PEM="${tsa.pem.replace(/\n/g, "\\n")}"`, tsaName);
} else if (args.includes("--tsa")) {
  const file = option("--cert-out", "tsa-certificate.pem");
  const tsa = await tsaKey(tsaName);
  await writeFile(file, tsa.pem);
  console.error(`TSA certificate (${tsaName}, self-signed, timeStamping) written to ${file}.`);
  console.error(`Set the line below as TSA_PRIVATE_JWK, and the certificate as TSA_CERT_PEM:`);
  console.error(`  npx wrangler secret put TSA_PRIVATE_JWK  (paste it)`);
  console.error(`  npx wrangler secret put TSA_CERT_PEM < ${file}\n`);
  console.log(tsa.secret);
} else {
  const { kid, secret, publicJwk } = await oauthKey();
  console.error(
    `kid: ${kid}\nSet the line below as a secret:  npx wrangler secret put OAUTH_PRIVATE_JWK  (paste it)\n`,
  );
  console.log(secret);
  console.error(`\npublic JWK (as published at /.well-known/jwks.json):\n${JSON.stringify(publicJwk)}`);
}

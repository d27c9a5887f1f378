/**
 * `GET /`: the page for a human who opened the API's address in a browser: what it is, two ways to
 * start, and every kind with its price, by family. Readable at phone width (390 px): the code blocks
 * and the tables wrap within the screen.
 */
import { escapeHtml, page, staticCsp, topBar } from "./layout";
import { KINDS_STYLE, kindsTables } from "./kinds-table";

/**
 * The page's own styles: the kinds' tables, and code blocks that wrap on a phone rather than run off
 * its edge (a sideways scroll inside a block shows no scrollbar there, so the line looks cut off).
 */
const LANDING_STYLE = `${KINDS_STYLE}
@media (max-width: 30rem) { pre { white-space: pre-wrap; word-break: break-all; } }
`;
const CSP = staticCsp(LANDING_STYLE);

// The URL on a line of its own and short comment lines, so it fits a phone without wrapping mid-word.
function curlExample(base: string): string {
  return `curl -i -X POST \\
  ${base}/v1/counters \\
  -H 'Content-Type: application/json' \\
  -d '{"ttl_seconds": 3600}'
# HTTP/1.1 402 Payment Required
# with the x402 terms of exactly this
# call, in the body and in the
# PAYMENT-REQUIRED header`;
}

// What `npm run buy` does, with the official client; short lines so it fits a half-width column.
function clientExample(base: string): string {
  return `// npm i @x402/fetch @x402/evm viem
import { wrapFetchWithPayment, x402Client }
  from "@x402/fetch";
import { registerExactEvmScheme }
  from "@x402/evm/exact/client";
import { privateKeyToAccount } from "viem/accounts";

const BASE = "${base}";
const x402 = registerExactEvmScheme(new x402Client(),
  { signer: privateKeyToAccount(KEY) });
const pay = wrapFetchWithPayment(fetch, x402);
const res = await pay(\`\${BASE}/v1/credits\`, {
  method: "POST", body: '{"amount_usd": 5}',
  headers: { "Content-Type": "application/json" } });
const { credit_token } = await res.json(); // zv_…`;
}

const code = (label: string, text: string) =>
  `<pre tabindex="0" aria-label="${escapeHtml(label)}"><code>${escapeHtml(text)}</code></pre>`;

export function landingPage(serviceName: string, baseUrl: string): Response {
  const name = escapeHtml(serviceName);
  const body = `<div class="wrap">
${topBar(serviceName)}
<main id="main">
  <h1>Persistence for AI agents, paid per call</h1>
  <p class="lead">${name} is an HTTP API that keeps state for autonomous agents between runs. An agent creates
  resources that live for a TTL it pays for, and manages each one with the management token (<code>zvm_…</code>)
  returned once at creation. Pay per call with <strong>x402</strong> (a signed USDC authorization) or with a prepaid
  <strong>credit token</strong> (<code>zv_…</code>). No signup, no account, no e-mail.</p>
  <div class="grid">
    <section class="card" aria-labelledby="start-curl">
      <h2 id="start-curl">1. Just call it</h2>
      <p>Any paid call without a credential answers <code>402</code> with its exact price as x402 terms.</p>
      ${code("curl example", curlExample(baseUrl))}
      <p>Sign the terms and repeat the call with <code>X-PAYMENT</code> (or <code>PAYMENT-SIGNATURE</code>): it runs
      once for that payment.</p>
      <p>With a credit token the same call is a plain bearer request, <code>Authorization: Bearer zv_…</code>; the
      <code>201</code> carries the resource's <code>management_token</code>, shown this once.</p>
    </section>
    <section class="card" aria-labelledby="start-client">
      <h2 id="start-client">2. Use an x402 client</h2>
      <p>Official x402 clients pay the 402 for you; buying credits once makes later calls a plain bearer token.</p>
      ${code("x402 client example in JavaScript", clientExample(baseUrl))}
    </section>
  </div>
  <ul class="facts">
    <li>Every resource expires unless extended; status, export and cancel are free with its management token.</li>
    <li>Missing something? <code>POST /v1/feature-requests</code>. Abusive content?
    <code>POST /v1/abuse-reports</code>. Both are free.</li>
  </ul>
  ${kindsTables()}
</main>
<footer class="muted">
  Read the <a href="/docs">API reference</a>, or give an agent the <a href="/openapi.json">OpenAPI document</a>.
</footer>
</div>`;
  return page({
    title: `${serviceName}: persistence for AI agents`,
    description:
      "Paid persistence API for autonomous AI agents: pay with x402 or a credit token; resources with TTLs " +
      "and management tokens.",
    head: `<style>${LANDING_STYLE}</style>`,
    body,
    csp: CSP,
  });
}

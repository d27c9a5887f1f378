/**
 * `GET /admin`: the operator's page, the figures of GET /v1/admin/stats as charts. Behind the
 * operator token like /v1/admin/… (404 while ADMIN_TOKEN is unset): its 401 asks the browser for
 * HTTP Basic, the token as the password, and the browser sends that again with the page's own
 * fetch of /v1/admin/stats. Its script and styles are this worker's routes below /admin/; the
 * policy allows nothing else: no inline code, no other origin, no framing. Not an API route, so not
 * in the OpenAPI document.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { operatorGuard } from "../ask/admin";
import { escapeHtml, STYLE } from "../site/layout";
import { PAGE_SCRIPT } from "./page-script";

const SCRIPT_PATH = "/admin/page.js";
const STYLE_PATH = "/admin/page.css";

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  // The empty icon (data:,) keeps the browser from asking for /favicon.ico.
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_STYLE = `${STYLE}
.controls { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0 1rem; }
select { font: inherit; padding: .25rem .5rem; color: var(--fg); background: var(--bg);
  border: 1px solid var(--line); border-radius: 6px; }
select:focus-visible, summary:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.totals { display: grid; grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr)); gap: .75rem; margin: 0; }
.totals dt { color: var(--muted); font-size: .85rem; }
.totals dd { margin: 0; font-size: 1.3rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.chart svg { display: block; max-width: 100%; height: auto; }
.chart text { fill: var(--fg); font-size: 12px; font-variant-numeric: tabular-nums; }
.chart .axis { stroke: var(--line); }
.legend { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none;
  margin: .25rem 0 .5rem; padding: 0; font-size: .9rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin-right: .35rem;
  vertical-align: -1px; }
.revenue, .answered { fill: var(--accent); background: var(--accent); }
.refused { fill: #b35c00; background: #b35c00; }
.errors { fill: #c62828; background: #c62828; }
.charged { fill: #6f42c1; background: #6f42c1; }
.active { fill: #2e7d32; background: #2e7d32; }
details.figures { margin-top: .5rem; font-size: .9rem; overflow-x: auto; }
details.figures table { border-collapse: collapse; width: 100%; }
details.figures th, details.figures td { text-align: left; padding: .2rem .4rem; border-bottom: 1px solid var(--line); }
details.figures .n { text-align: right; font-variant-numeric: tabular-nums; }
`;

const legend =
  `<ul class="legend" aria-hidden="true"><li><span class="swatch answered"></span>answered</li><li><span ` +
  `class="swatch refused"></span>refused (4xx)</li><li><span class="swatch errors"></span>errors ` +
  `(5xx)</li></ul>`;

function card(id: string, title: string, note: string, extra = ""): string {
  return (
    `<section class="card" aria-labelledby="${id}-h"><h2 id="${id}-h">${title}</h2><p class="muted">${note}` +
    `</p>${extra}<div id="${id}" class="chart"></div></section>`
  );
}

function pageHtml(serviceName: string): string {
  const name = escapeHtml(serviceName);
  const deadNote =
    "Died (dead-letter queue or their own schedule spent) and not delivered since. Pending now: see Totals.";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${name} operator</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${STYLE_PATH}">
<script src="${SCRIPT_PATH}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<div class="wrap">
<header class="top"><a class="brand" href="/">${name}</a>
<nav aria-label="Operator"><ul>
<li><a href="/v1/admin/stats">Figures as JSON</a></li>
<li><a href="/docs">API reference</a></li>
</ul></nav></header>
<main id="main">
<h1>Operator</h1>
<p class="controls"><label for="days">Period</label> <select id="days">
<option value="1">Today (UTC)</option>
<option value="7">Last 7 days</option>
<option value="30" selected>Last 30 days</option>
</select></p>
<p id="status" role="status">Loading the figures…</p>
<noscript><p>The charts are drawn by script; the figures themselves are at
<a href="/v1/admin/stats">/v1/admin/stats</a>.</p></noscript>
<section class="card" aria-labelledby="totals-h">
<h2 id="totals-h">Totals</h2><dl id="totals" class="totals"></dl>
</section>
<div class="grid">
${card("revenue", "Revenue by day", "x402 payments settled: credit bought, and calls paid one by one.")}
${card("calls-by-day", "Calls by day", "API requests answered, whatever their status.")}
${card("calls", "Calls by kind", "Answered, refused (4xx: never charged) and errors (5xx: never charged).", legend)}
${card("charged", "Charged by kind", "The price of calls answered 2xx, by credit token or x402.")}
${card("active", "Active resources by kind", "Now: active and not past their expiry.")}
${card("dead", "Deliveries dead by day", deadNote)}
</div>
</main>
</div>
</body>
</html>`;
}

function answer(body: string, type: string, csp?: string): Response {
  const headers = new Headers({
    "Content-Type": type,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
  });
  if (csp) {
    headers.set("Content-Security-Policy", csp);
    headers.set("X-Frame-Options", "DENY");
  }
  return new Response(body, { headers });
}

export function registerOperatorPage(app: OpenAPIHono<AppEnv>): void {
  // A 401 here asks a browser for Basic credentials; the guard also makes every answer no-store.
  const guard = operatorGuard('Basic realm="operator", charset="UTF-8"');
  app.use("/admin", guard);
  app.use("/admin/*", guard);
  app.get("/admin", (c) => answer(pageHtml(c.env.SERVICE_NAME), "text/html; charset=utf-8", CSP));
  app.get(SCRIPT_PATH, () => answer(PAGE_SCRIPT, "text/javascript; charset=utf-8"));
  app.get(STYLE_PATH, () => answer(PAGE_STYLE, "text/css; charset=utf-8"));
}

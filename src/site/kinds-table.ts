/**
 * The kinds on the landing page: one table per family, each kind with what it is and what it
 * costs, all from the registry and the price list (/v1/prices), so the page cannot drift from
 * them. Made to read at phone width: three columns, long names free to wrap.
 */
import { allKinds, FAMILIES } from "../resources/kinds";
import type { AnyKind } from "../kind/kind";
import { TAG_DESCRIPTIONS, TAGS } from "../openapi/tags";
import { lifetimePriceMicro, priceList } from "../money/prices";
import { microToUsd } from "../money/amounts";
import { escapeHtml } from "./layout";

/** Styles of the tables (the landing page's policy names their hash). */
export const KINDS_STYLE = `
.kinds { margin: 1.5rem 0 0; }
.kinds table { width: 100%; table-layout: fixed; border-collapse: collapse; margin: 0 0 1.25rem; font-size: .92rem; }
.kinds thead th:first-child { width: 24%; }
.kinds thead th:last-child { width: 24%; }
.kinds caption { text-align: left; font-weight: 700; font-size: 1.05rem; padding: .25rem 0 .4rem; }
.kinds caption span { font-weight: 400; color: var(--muted); font-size: .92rem; }
.kinds th, .kinds td { text-align: left; vertical-align: top; padding: .45rem .5rem;
  border-top: 1px solid var(--line); }
.kinds thead th { font-size: .85rem; color: var(--muted); border-top: 0; }
.kinds th[scope=row] { font-weight: 400; }
.kinds th[scope=row] code { font-weight: 600; font-size: .82rem; background: none; padding: 0; }
.kinds .title { display: block; color: var(--muted); font-size: .85rem; }
.kinds .price { white-space: nowrap; font-variant-numeric: tabular-nums; }
.kinds .price span { display: block; color: var(--muted); font-size: .85rem; white-space: normal; }
@media (max-width: 30rem) {
  .kinds th, .kinds td { padding: .4rem .3rem; }
  .kinds table { font-size: .88rem; }
  .kinds thead th:first-child, .kinds thead th:last-child { width: 30%; }
}
`;

/** The summary's first clause (up to its first top-level `:`, `;` or sentence end): what the kind is, in a line. */
function firstClause(summary: string): string {
  let depth = 0;
  for (let i = 0; i < summary.length; i++) {
    const ch = summary[i]!;
    if (ch === "(") depth++;
    else if (ch === ")") depth = Math.max(0, depth - 1);
    else if (
      depth === 0 &&
      (ch === ":" || ch === ";" || (ch === "." && (summary[i + 1] === " " || i === summary.length - 1)))
    )
      return summary.slice(0, i);
  }
  return summary;
}

/** Escaped, with the summary's `code` spans as code. */
const inlineCode = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");

const dollars = (usd: number) => `$${usd}`;
const days = (seconds: number) => {
  const n = Math.ceil(seconds / 86400);
  return n === 1 ? "1 day" : `${n} days`;
};

/** What /v1/prices says of the kind's create: its rate per day, and the create at the default lifetime. */
function priceCell(kind: AnyKind, perDayUsd: number): string {
  const create = microToUsd(lifetimePriceMicro(kind, kind.defaultTtlSeconds));
  return (
    `<td class="price">${dollars(perDayUsd)} a day<span>${dollars(create)} at create (` +
    `${days(kind.defaultTtlSeconds)})</span></td>`
  );
}

/** Every kind is loaded by then (site/index.ts loads them before the landing page). */
export function kindsTables(): string {
  const every = allKinds();
  const perDay = new Map(
    priceList()
      .filter((p) => p.operation.endsWith(".create"))
      .map((p) => [p.operation.slice(0, -".create".length), p.price_usd]),
  );
  const tables = FAMILIES.map((family) => {
    const kinds = every.filter((k) => k.family === family);
    if (!kinds.length) return "";
    const name = TAGS[family];
    const about = TAG_DESCRIPTIONS.find((t) => t.name === name)?.description ?? "";
    const rows = kinds.map(
      (
        k,
      ) => `<tr><th scope="row"><code>${escapeHtml(k.kind)}</code><span class="title">${escapeHtml(k.title)}</span></th>
<td>${inlineCode(firstClause(k.summary))}</td>${priceCell(k, perDay.get(k.kind)!)}</tr>`,
    );
    return `<table id="family-${family}">
<caption>${escapeHtml(name)} <span>${escapeHtml(about)}</span></caption>
<thead><tr><th scope="col">Kind</th><th scope="col">What it is</th><th scope="col">Price</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>`;
  });
  return `<section class="kinds" aria-labelledby="kinds-h">
<h2 id="kinds-h">The ${every.length} kinds</h2>
<p class="muted">A resource costs its rate for each started day of its life, paid at create (and at extend);
its operations are priced per call in the <a href="/v1/prices">price list</a>, the authority on every charge.</p>
${tables.join("\n")}
</section>`;
}

/** What a tool costs and how it is paid, in words, from the price list (the single source of every charge). */
import type { PriceLine } from "../money/prices";

const snake = (kind: string) => kind.replace(/-/g, "_");

/** The tool that charges a price-list operation (`counters.create` → `create_counters`). */
function toolOf(operation: string): string {
  const dot = operation.indexOf(".");
  const kind = snake(operation.slice(0, dot));
  const op = operation.slice(dot + 1);
  if (op === "create") return `create_${kind}`;
  if (op === "extend") return "extend_resource";
  return `${kind}_${op}`;
}

function cost(tool: string, lines: PriceLine[]): string {
  // extend_resource charges the day rate of whichever kind the resource is: one line per kind would not fit a tool
  // list.
  if (tool === "extend_resource")
    return "Costs the kind's day rate per started day added (see list_prices or describe_kind)";
  const each = lines.map(
    (l) => `$${l.price_usd} per ${l.unit === "day" ? "started day of life" : l.unit === "mb" ? "MB" : "call"}`,
  );
  return `Costs ${each.join(", ")}`;
}

/** No line in the price list means free; the summaries of free routes mostly say so already. */
function priceText(tool: string, summary: string, prices: PriceLine[]): string {
  const lines = prices.filter((l) => toolOf(l.operation) === tool);
  if (lines.length === 0) return /\bfree\b/i.test(summary) ? "" : " Free.";
  return (
    ` ${cost(tool, lines)}: paid by this connection's bearer credential or with x402 in ` + `\`_meta["x402/payment"]\`.`
  );
}

export function toolDescription(summary: string, tool: string, managed: boolean, prices: PriceLine[]): string {
  const who = managed ? " Needs the resource `id` and its `management_token`." : "";
  const once = tool.startsWith("create_") ? " Returns the resource's `management_token` once: keep it." : "";
  return `${summary.replace(/\.$/, "")}.${priceText(tool, summary, prices)}${who}${once}`;
}

/** spread: members that each fire once per period at a stable hashed offset (Jenkins H), spreading load. */
import { kindOf } from "../../../kind/kind";
import { add, count, list, previewFires, remove, timer } from "./store";
import {
  MAX_MEMBERS,
  addInput,
  listInput,
  member,
  memberPage,
  preview,
  previewInput,
  removeInput,
  spreadConfig,
  type SpreadConfig,
} from "./schema";
import { TABLES } from "./store";

const OP_PRICE = 100; // µUSD

const kind = kindOf<SpreadConfig>();

export const spread = kind.define({
  kind: "spread",
  family: "time",
  title: "Spread",
  summary:
    "Members added by key each fire once per period at a stable hashed offset, so N members spread over " +
    "the period; list with slots, preview.",
  targetFields: ["url"],
  createSchema: spreadConfig,
  example: { url: "https://example.com/hooks/poll-feed", period_seconds: 3600 },
  migrations: [{ sql: TABLES }],
  // Firings are many and unpriced one by one: the day rate covers them.
  dayPriceMicro: 5000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: { max_members: MAX_MEMBERS },
  sends: { "spread.fired": "A member's call, once per period at its slot (body: the member's, or {\"key\": …})." },
  usage: (store) => ({ members: count(store) }),
  exportData: (store) => list(store, 10_000, undefined),
  timer,
  ops: [
    kind.op({
      name: "add_member",
      method: "post",
      path: "/members",
      summary: "Add (or update) a member",
      priceMicro: OP_PRICE,
      input: addInput,
      output: member,
      errors: [413],
      example: { input: { key: "feed-42", body: { feed: "https://example.com/feeds/42.xml" } } },
      run: (store, config, input) => add(store, config, input.key, input.body),
    }),
    kind.op({
      name: "members",
      method: "get",
      path: "/members",
      summary: "Members with their slots",
      priceMicro: OP_PRICE,
      input: listInput,
      output: memberPage,
      example: { input: { limit: 50 } },
      run: (store, _config, input) => list(store, input.limit, input.cursor),
    }),
    kind.op({
      name: "remove_member",
      method: "post",
      destructive: true,
      path: "/members/remove",
      summary: "Remove a member",
      priceMicro: OP_PRICE,
      input: removeInput,
      output: member,
      example: { input: { key: "feed-42" }, after: ["add_member"] },
      run: (store, _config, input) => remove(store, input.key),
    }),
    kind.op({
      name: "next",
      method: "get",
      path: "/next",
      summary: "Preview the next firings of all members, soonest first",
      priceMicro: OP_PRICE,
      input: previewInput,
      output: preview,
      example: { input: { count: 10 } },
      run: (store, config, input) => previewFires(store, config, input.count),
    }),
  ],
});

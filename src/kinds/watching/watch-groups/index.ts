/**
 * watch-groups: an expression over watches and other groups (and, or, not, at least K of N),
 * as Datadog's composite monitors: the group's state is derived from its children's, told to it
 * by relays as they move (signals.ts), and it alerts only on its own transitions, one
 * group.down per incident, with the child that caused it and every child's state.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { AppError, fieldError } from "../../../http/errors";
import { checkOwnedResource } from "../../../kind/owned";
import {
  addSubscriber,
  alertTargetIds,
  initSignals,
  readSignal,
  subscribers,
  TABLES as SIGNAL_TABLES,
} from "../signals";
import { aliasesIn, expressionProblem, MAX_CHILDREN, MAX_DEPTH } from "./expression";
import {
  allTransitions,
  childState,
  groupUsage,
  groupView,
  initGroup,
  isChild,
  MAX_TRANSITIONS,
  transitions,
  TABLES,
} from "./store";
import { groupConfig, groupStatus, transitionPage, transitionsInput, type GroupConfig } from "./schema";

const OP_PRICE = 100; // µUSD
const kind = kindOf<GroupConfig>();

export const watchGroups = kind.define({
  kind: "watch-groups",
  family: "watching",
  title: "Watch group",
  summary:
    "An expression over watches and groups (and, or, not, at least K of N; unknown children in " +
    "three-valued logic): group.down and group.up only on the group's own transitions.",
  createSchema: groupConfig,
  example: { children: { api: "zvm_ExampleApiWatch", db: "zvm_ExampleDbWatch" }, expression: { or: ["api", "db"] } },
  exampleNeeds: { zvm_ExampleApiWatch: "watches", zvm_ExampleDbWatch: "watches" },
  migrations: [{ sql: [...TABLES, ...SIGNAL_TABLES] }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: { max_children: MAX_CHILDREN, max_depth: MAX_DEPTH, max_transitions: MAX_TRANSITIONS },
  sends: {
    "group.down":
      "The expression became true (data.cause: the child that made it so; data.children: every child's state).",
    "group.up": "The expression became false after the group was down (data.downtime_seconds).",
  },
  checkCreate: (config) => {
    const aliases = new Set(Object.keys(config.children));
    const problem = expressionProblem(config.expression, aliases);
    if (problem) throw fieldError("expression", problem);
    const unused = [...aliases].filter((a) => !aliasesIn(config.expression).has(a));
    if (unused.length) throw fieldError("children", `${unused.join(", ")} not used by the expression`);
  },
  sealCreate: async (env, config) => {
    const ids: Record<string, string> = {};
    for (const [alias, token] of Object.entries(config.children))
      ids[alias] = await checkOwnedResource(env, token, ["watches", "watch-groups"], `children.${alias}`);
    if (new Set(Object.values(ids)).size !== Object.keys(ids).length)
      throw fieldError("children", "each child may be named once");
    return { config: await alertTargetIds(env, { ...config, children: ids }), sealed: null };
  },
  init: (store, config) => {
    initGroup(store, config);
    initSignals(store, "unknown");
  },
  usage: (store) => groupUsage(store.sql),
  status: (store, config) => groupView(store, config),
  exportData: (store, config) => ({
    status: groupView(store, config),
    transitions: allTransitions(store.sql),
    followers: subscribers(store.sql).map((s) => s.id),
  }),
  relay: (store, config, message, _relayId, from) => {
    const signal = readSignal(message);
    if (signal.type === "subscribe") addSubscriber(store, from);
    else if (signal.type === "state") {
      if (!isChild(store.sql, from)) throw new AppError("forbidden", "Not a child of this group.");
      childState(store, config, from, signal);
    }
  },
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary: "State, the expression and every child's state",
      priceMicro: OP_PRICE,
      input: noInput,
      output: groupStatus,
      run: (store, config) => groupView(store, config),
    }),
    kind.op({
      name: "transitions",
      method: "get",
      path: "/transitions",
      summary: "The group's transitions, newest first, each with its cause",
      priceMicro: OP_PRICE,
      input: transitionsInput,
      output: transitionPage,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => transitions(store, input.limit, input.cursor),
    }),
  ],
});

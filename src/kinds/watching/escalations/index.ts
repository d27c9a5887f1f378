/**
 * escalations: a chain of steps (a delay, then targets: webhook URLs or notify resources),
 * repeated `repeat` more times, run for each incident until someone acknowledges it (its ack
 * page, or the API) or it is resolved (the API, or the watch or group that opened it recovering).
 * PagerDuty's and Grafana OnCall's escalation policies are the bar; every step sent and who
 * acknowledged, when, is in the incident's timeline.
 */
import { kindOf } from "../../../kind/kind";
import { noInput } from "../../../openapi/schemas";
import { checkNotifyTarget } from "../../address/notify/people";
import { readSignal } from "../signals";
import { ackFace } from "./public";
import { allIncidents, list, TABLES, usage } from "./incidents";
import { resolveFrom, SOURCE_TABLES, triggerFrom } from "./sources";
import { fireDue, nextDue } from "./steps";
import { ackById, getIncident, resolveById, trigger } from "./store";
import {
  MAX_INCIDENTS,
  MAX_OPEN_INCIDENTS,
  MAX_REPEAT,
  MAX_STEPS,
  MAX_TARGETS,
  ackInput,
  escalationConfig,
  incident,
  incidentPage,
  incidentParams,
  listInput,
  resolveInput,
  triggerInput,
  type EscalationConfig,
} from "./schema";

const OP_PRICE = 100; // µUSD
/** An incident: its steps' sends are covered here. */
const TRIGGER_PRICE = 1000;

const kind = kindOf<EscalationConfig>();

export const escalations = kind.define({
  kind: "escalations",
  family: "watching",
  title: "Escalation policy",
  summary:
    "Steps of (delay, targets: URLs or notify resources), repeated; each incident escalates until " +
    "acknowledged (its ack page or the API) or resolved (or its watch or group recovers).",
  createSchema: escalationConfig,
  example: {
    steps: [
      { delay_seconds: 0, targets: [{ url: "https://example.com/hooks/oncall-primary" }] },
      { delay_seconds: 900, targets: [{ url: "https://example.com/hooks/oncall-secondary" }] },
    ],
    repeat: 1,
  },
  migrations: [{ sql: TABLES }, { sql: SOURCE_TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 366 * 86400,
  limits: {
    max_steps: MAX_STEPS,
    max_targets_per_step: MAX_TARGETS,
    max_repeat: MAX_REPEAT,
    max_open_incidents: MAX_OPEN_INCIDENTS,
    max_incidents: MAX_INCIDENTS,
  },
  sends: {
    "escalation.step":
      "To a step's URL: the incident (title, details, step, round) and data.ack_url, the page that acknowledges it.",
    "escalation.triggered": "To notify_url: an incident opened.",
    "escalation.acknowledged": "To notify_url: someone acknowledged (data.acknowledged_by).",
    "escalation.resolved": "To notify_url: the incident was resolved.",
  },
  targetFields: ["steps.*.targets.*.url"],
  // Notify resources are named by their management tokens, of which only the ids are kept.
  sealCreate: async (env, config) => {
    const steps = [];
    for (const [i, step] of config.steps.entries()) {
      const targets = [];
      for (const [j, t] of step.targets.entries())
        targets.push(
          "url" in t ? t : { notify: await checkNotifyTarget(env, t.notify, `steps.${i}.targets.${j}.notify`) },
        );
      steps.push({ ...step, targets });
    }
    return { config: { ...config, steps }, sealed: null };
  },
  usage: (store) => usage(store.sql),
  exportData: (store) => ({ incidents: allIncidents(store) }),
  timer: kind.timer({
    nextDue: (store) => nextDue(store.sql),
    fire: (store, config) => fireDue(store, config),
  }),
  public: ackFace,
  // A watch or group going down opens an incident keyed by its id; its recovery resolves it.
  relay: (store, config, message, _relayId, from) => {
    const signal = readSignal(message);
    if (signal.type === "trigger") triggerFrom(store, config, from, signal.since, signal.title, signal.details);
    else if (signal.type === "resolve") resolveFrom(store, from, signal.since);
  },
  ops: [
    kind.op({
      name: "trigger",
      method: "post",
      path: "/incidents",
      summary: "Open an incident (or answer the open one with the same key); its first step goes after the first delay",
      priceMicro: TRIGGER_PRICE,
      input: triggerInput,
      output: incident,
      errors: [409],
      example: {
        input: { title: "Checkout is failing", details: "5xx rate above 20% for 5 minutes", key: "checkout-5xx" },
      },
      run: (store, config, input) => trigger(store, config, input, "api"),
    }),
    kind.op({
      name: "list",
      method: "get",
      path: "/incidents",
      summary: "Incidents, newest first, optionally by state",
      priceMicro: OP_PRICE,
      input: listInput,
      output: incidentPage,
      example: { input: { state: "open", limit: 20 } },
      run: (store, _config, input) => list(store, input.limit, input.cursor, input.state),
    }),
    kind.op({
      name: "get_incident",
      method: "get",
      path: "/incidents/{incident_id}",
      summary: "One incident with its timeline",
      priceMicro: OP_PRICE,
      params: incidentParams,
      input: noInput,
      output: incident,
      errors: [404],
      example: { params: { incident_id: "inc_00000000000000000000000000000000" }, after: ["trigger"] },
      run: (store, _config, input) => getIncident(store, input.incident_id),
    }),
    kind.op({
      name: "ack",
      method: "post",
      path: "/incidents/{incident_id}/ack",
      summary: "Acknowledge: no further steps are sent",
      priceMicro: OP_PRICE,
      params: incidentParams,
      input: ackInput,
      output: incident,
      errors: [404],
      example: {
        params: { incident_id: "inc_00000000000000000000000000000000" },
        input: { by: "alice" },
        after: ["trigger"],
      },
      run: (store, _config, input) => ackById(store, input.incident_id, input.by),
    }),
    kind.op({
      name: "resolve",
      method: "post",
      path: "/incidents/{incident_id}/resolve",
      summary: "Resolve: the incident is closed",
      priceMicro: OP_PRICE,
      params: incidentParams,
      input: resolveInput,
      output: incident,
      errors: [404],
      example: {
        params: { incident_id: "inc_00000000000000000000000000000000" },
        input: { by: "alice" },
        after: ["trigger"],
      },
      run: (store, _config, input) => resolveById(store, input.incident_id, input.by),
    }),
  ],
});

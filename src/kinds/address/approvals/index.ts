/**
 * approvals: a human approval gate (Trigger.dev waitpoints, HumanLayer). The agent asks (title,
 * Markdown description, options); approvers get their own unguessable links (through a notify
 * resource or a signed event); the first decision on the hosted page wins, or the timeout does;
 * the agent long-polls or hears at callback_url; the decision record is a JWS over what was
 * decided, by which link, when, and the hash of what was asked.
 */
import { AppError } from "../../../http/errors";
import { kindOf } from "../../../kind/kind";
import { checkNotifyTarget } from "../notify/people";
import { signDecision, type Signed } from "./decision";
import { approvalsFace } from "./public";
import { approvalRow, openRequest, settle, TABLES, view } from "./store";
import {
  approvalsCreate,
  approvalView,
  DECISION_TYP,
  getInput,
  MAX_APPROVERS,
  MIN_TIMEOUT_SECONDS,
  type ApprovalsConfig,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

const kind = kindOf<ApprovalsConfig>();

export const approvals = kind.define({
  kind: "approvals",
  family: "address",
  title: "Human approval",
  summary:
    `A question for people with a hosted decision page at an unguessable link (up to ${MAX_APPROVERS}` +
    ` named approvers, each with their own link, sent through a notify resource or a signed event); ` +
    `the first decision wins, or the timeout (default_on_expiry); long-poll or callback for the result; ` +
    `the decision record is a JWS (typ ${DECISION_TYP}).`,
  createSchema: approvalsCreate,
  example: {
    title: "Deploy v2.3 to production?",
    description: "Changes: **3 migrations**, new billing page. [Release notes](https://example.com/notes)",
    timeout_seconds: 3600,
    default_on_expiry: "deny",
    approvers: [{ name: "ops on call", url: "https://example.com/hooks/approvals" }],
    callback_url: "https://example.com/hooks/decided",
  },
  targetFields: ["callback_url"],
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 7 * 86400,
  maxTtlSeconds: 90 * 86400,
  limits: { max_approvers: MAX_APPROVERS, min_timeout_seconds: MIN_TIMEOUT_SECONDS },
  sends: {
    "approvals.requested":
      "To an approver's url: the request with that approver's own link (`approver`, `title`, " +
      "`description`, `options`, `link`, `decide_by`).",
    "approvals.decided": "To callback_url: the decision (`decision`, as the record signs it) and its JWS (`jws`).",
  },
  checkCreate: (config, expiresAt, now) => {
    const refuse = (path: string, why: string) =>
      new AppError("validation_failed", `${path}: ${why}`, { errors: [{ path, message: why }] });
    if (now + config.timeout_seconds * 1000 > expiresAt)
      throw refuse("timeout_seconds", "must end within the resource's life (ttl_seconds)");
    if (config.default_on_expiry !== null && !config.options.some((o) => o.id === config.default_on_expiry))
      throw refuse("default_on_expiry", "must be one of the options' ids");
    config.approvers.forEach((a, i) => {
      if (!a.notify && !a.url) throw refuse(`approvers.${i}`, "give notify or url, so the approver gets their link");
    });
  },
  sealCreate: async (env, config) => ({
    config: {
      ...config,
      approvers: await Promise.all(
        config.approvers.map(async (a, i) => ({
          ...a,
          notify: a.notify && (await checkNotifyTarget(env, a.notify, `approvers.${i}.notify`)),
        })),
      ),
    },
    sealed: null,
  }),
  init: (store, config) => openRequest(store, config),
  usage: (store) => ({ decided: approvalRow(store.sql).state === "pending" ? 0 : 1 }),
  status: (store) => ({ state: approvalRow(store.sql).state }),
  exportData: (store, config) => view(store, config),
  public: approvalsFace,
  timer: kind.timer<Signed | null>({
    nextDue: (store) => {
      const row = approvalRow(store.sql);
      return row.state === "pending" ? row.deadline : null;
    },
    prepare: (ctx, config) =>
      approvalRow(ctx.sql).state === "pending"
        ? signDecision(ctx, config, config.default_on_expiry, null, "timeout", true)
        : Promise.resolve(null),
    fire: (store, config, signed) => {
      if (signed && store.now >= approvalRow(store.sql).deadline) settle(store, config, signed.decision, signed.jws);
    },
  }),
  ops: [
    kind.op({
      name: "get",
      method: "get",
      path: "",
      summary:
        "The request's state, the decision and its signed record, and the approvers' links (long-poll with " +
        "wait_seconds)",
      priceMicro: OP_PRICE,
      input: getInput,
      output: approvalView,
      example: { input: { wait_seconds: 0 } },
      ready: (store) => approvalRow(store.sql).state !== "pending",
      run: (store, config) => view(store, config),
    }),
  ],
});

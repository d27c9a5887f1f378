/**
 * forms: a hosted contact form (Formspree). The owner configures the fields; the public address
 * serves the page people fill in (accessible, no script) and takes JSON from scripts. Spam is
 * kept out by a honeypot (answered as taken, discarded) and an hourly share per client address.
 * Submissions are kept, listed and exported, and relayed as they come to a webhook (signed) and
 * to a notify resource's people.
 */
import { noInput } from "../../../openapi/schemas";
import { kindOf } from "../../../kind/kind";
import { checkNotifyTarget } from "../notify/people";
import { formsFace } from "./public";
import { allSubmissions, deleteSubmission, getSubmission, stats, submissionsPage, TABLES } from "./store";
import {
  formsCreate,
  formsInfo,
  MAX_FIELDS,
  MAX_SUBMISSION_BYTES,
  MAX_SUBMISSIONS,
  submission,
  submissionIdParam,
  submissionsInput,
  submissionsPage as pageSchema,
  type FormsConfig,
} from "./schema";

const OP_PRICE = 100; // µUSD, $0.0001 per call

const kind = kindOf<FormsConfig>();

/** A submission that fits the example form (the examples test posts it before reading one back). */
const ARRIVAL = { name: "Ada Lovelace", email: "ada@example.com", message: "Hello" };

export const forms = kind.define({
  kind: "forms",
  family: "address",
  title: "Hosted form",
  summary:
    `A form page at a public address with up to ${MAX_FIELDS} fields (text, email, textarea, select, ` +
    `checkbox, number) that people fill in and scripts post JSON to; ` +
    "honeypot and per-address rate limit against spam; submissions kept, listed, exported, and relayed to " +
    "a webhook or a notify resource. Receiving is free.",
  createSchema: formsCreate,
  example: {
    title: "Contact us",
    description: "We answer within a day.",
    fields: [
      { name: "name", label: "Your name", required: true },
      { name: "email", label: "E-mail", type: "email", required: true },
      { name: "topic", label: "Topic", type: "select", options: ["Sales", "Support"] },
      { name: "message", label: "Message", type: "textarea", required: true, max_length: 2000 },
      { name: "newsletter", label: "Send me the newsletter", type: "checkbox" },
    ],
    webhook_url: "https://example.com/hooks/contact",
  },
  targetFields: ["redirect_url", "webhook_url"],
  migrations: [{ sql: TABLES }],
  dayPriceMicro: 2000,
  defaultTtlSeconds: 30 * 86400,
  maxTtlSeconds: 365 * 86400,
  limits: { max_fields: MAX_FIELDS, max_submissions: MAX_SUBMISSIONS, max_submission_bytes: MAX_SUBMISSION_BYTES },
  sends: {
    "forms.submission":
      "To webhook_url: a submission as it was kept (`submission_id`, `seq`, `received_at`, `data` by " +
      "field, `client_ip`, `user_agent`).",
  },
  sealCreate: async (env, config) => ({
    config: { ...config, notify: config.notify && (await checkNotifyTarget(env, config.notify, "notify")) },
    sealed: null,
  }),
  usage: (store) => stats(store.sql),
  exportData: (store) => ({ ...stats(store.sql), submissions: allSubmissions(store.sql) }),
  public: formsFace,
  ops: [
    kind.op({
      name: "list_submissions",
      method: "get",
      path: "/submissions",
      summary: "Submissions, newest first",
      priceMicro: OP_PRICE,
      input: submissionsInput,
      output: pageSchema,
      example: { input: { limit: 20 } },
      run: (store, _config, input) => submissionsPage(store.sql, input.limit, input.cursor),
    }),
    kind.op({
      name: "get_submission",
      method: "get",
      path: "/submissions/{submission_id}",
      summary: "One submission",
      priceMicro: OP_PRICE,
      params: submissionIdParam,
      input: noInput,
      output: submission,
      errors: [404],
      example: {
        params: { submission_id: "sub_0123456789abcdef" },
        arrivals: 1,
        arrivalBody: ARRIVAL,
        after: ["list_submissions"],
      },
      run: (store, _config, input) => getSubmission(store.sql, input.submission_id),
    }),
    kind.op({
      name: "delete_submission",
      method: "delete",
      path: "/submissions/{submission_id}",
      summary: "Delete a submission (it makes room: a full form takes new ones again)",
      priceMicro: OP_PRICE,
      params: submissionIdParam,
      input: noInput,
      output: submission,
      errors: [404],
      example: {
        params: { submission_id: "sub_0123456789abcdef" },
        arrivals: 1,
        arrivalBody: ARRIVAL,
        after: ["list_submissions"],
      },
      run: (store, _config, input) => deleteSubmission(store.sql, input.submission_id),
    }),
    kind.op({
      name: "info",
      method: "get",
      path: "",
      summary: "Submissions kept, spam discarded, posts refused by the rate limit",
      priceMicro: OP_PRICE,
      input: noInput,
      output: formsInfo,
      run: (store) => stats(store.sql),
    }),
  ],
});

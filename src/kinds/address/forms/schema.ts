/**
 * Request and response shapes of forms: a hosted contact form (Formspree, Tally) with the fields
 * the owner configures, spam kept out by a honeypot and a per-address rate limit, submissions
 * stored and optionally relayed. The same schemas validate, type and document.
 */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { pageLimit, seqCursor, singleLine } from "../../../openapi/schemas";
import { notifyTarget } from "../notify/people";

/** Fields one form has. */
export const MAX_FIELDS = 30;
/** Submissions one form keeps; past this the form answers 507 until some are deleted. */
export const MAX_SUBMISSIONS = 10_000;
/** A submission's body (the page's form post or a script's JSON). */
export const MAX_SUBMISSION_BYTES = 64 * 1024;
/** The longest any text field may be configured to take. */
export const MAX_FIELD_CHARS = 10_000;
/** The honeypot: a field people never see (bots fill it). Its name is not available to the owner's fields. */
export const HONEYPOT = "website";

export const FIELD_TYPES = ["text", "email", "textarea", "select", "checkbox", "number"] as const;
/** The length a text field takes when the owner does not say. */
export const DEFAULT_MAX_LENGTH: Record<string, number> = { text: 200, email: 254, textarea: 5000 };

const field = z
  .object({
    name: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,39}$/, "must be 1–40 lower-case letters, digits or _ starting with a letter")
      .refine((n) => n !== HONEYPOT, `"${HONEYPOT}" is the honeypot's name`)
      .describe("The key it has in a submission."),
    label: singleLine(200).min(1).describe("What the page says above it."),
    type: z.enum(FIELD_TYPES).default("text"),
    required: z.boolean().default(false),
    max_length: z
      .int()
      .min(1)
      .max(MAX_FIELD_CHARS)
      .nullable()
      .default(null)
      .describe("For text, email and textarea (default 200, 254 and 5,000 characters)."),
    options: z
      .array(singleLine(200).min(1))
      .min(1)
      .max(50)
      .nullable()
      .default(null)
      .describe("For select: the choices (required there, refused elsewhere)."),
    min: z.number().nullable().default(null).describe("For number: the smallest value taken."),
    max: z.number().nullable().default(null).describe("For number: the largest value taken."),
    help: singleLine(300).nullable().default(null).describe("A hint shown under the field."),
  })
  .strict()
  .refine((f) => (f.type === "select") === (f.options !== null), {
    message: "options go with type select, and select needs them",
    path: ["options"],
  })
  .refine((f) => f.max_length === null || ["text", "email", "textarea"].includes(f.type), {
    message: "max_length is for text, email and textarea",
    path: ["max_length"],
  })
  .refine((f) => (f.min === null && f.max === null) || f.type === "number", {
    message: "min and max are for number",
    path: ["min"],
  })
  .refine((f) => f.min === null || f.max === null || f.min <= f.max, { message: "min is above max", path: ["min"] });
export type FormField = z.infer<typeof field>;

export const formsCreate = z
  .object({
    title: singleLine(200).min(1).describe("The page's heading."),
    description: z
      .string()
      .max(2000)
      .regex(/^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/, "must be text without control characters")
      .nullable()
      .default(null)
      .describe("Plain text under the heading (line breaks kept)."),
    fields: z
      .array(field)
      .min(1)
      .max(MAX_FIELDS)
      .refine((fs) => new Set(fs.map((f) => f.name)).size === fs.length, "field names must be unique"),
    submit_label: singleLine(60).min(1).default("Send"),
    thank_you: singleLine(1000)
      .min(1)
      .default("Thank you: your message was received.")
      .describe("What the page says after a submission."),
    redirect_url: requestFields.url
      .nullable()
      .default(null)
      .describe("Instead of the thank-you page, send the browser here (303) after a submission."),
    webhook_url: requestFields.url
      .nullable()
      .default(null)
      .describe(
        "Each submission is posted here as a forms.submission event, signed with the resource's signing_secret.",
      ),
    notify: notifyTarget("submissions, as messages to people,"),
    max_per_ip_per_hour: z
      .int()
      .min(1)
      .max(1000)
      .default(20)
      .describe("Submissions one client address may make in a clock hour; more are refused with 429."),
  })
  .strict();
export type FormsConfig = z.infer<typeof formsCreate>;

export const submission = z.object({
  submission_id: z.string(),
  seq: z.int(),
  received_at: z.string(),
  data: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .describe("By field name: text, a number, or a checkbox's true/false."),
  client_ip: z.string().nullable(),
  user_agent: z.string().nullable(),
});

export const submissionsInput = z.object({ limit: pageLimit(20), cursor: seqCursor });
export const submissionsPage = z.object({ items: z.array(submission), next_cursor: z.string().nullable() });
export const submissionIdParam = z.object({ submission_id: z.string().max(64) });

export const formsInfo = z.object({
  submissions: z.int(),
  spam: z.int().describe("Posts that filled the honeypot: answered as if taken, and discarded."),
  rate_limited: z.int().describe("Posts refused with 429 by max_per_ip_per_hour."),
});

/** Shapes of the Ask endpoints and their operator side; the same schemas validate, type and document. */
import { z } from "@hono/zod-openapi";
import { pageLimit, httpUrl } from "../openapi/schemas";
import { PUBLIC_ID_PATTERN } from "../resources/public-addresses";

export const ABUSE_REASONS = [
  "phishing",
  "malware",
  "spam",
  "fraud",
  "illegal",
  "child_safety",
  "copyright",
  "privacy",
  "harassment",
  "other",
] as const;

export const featureRequestBody = z
  .object({
    title: z.string().trim().min(1).max(200).describe("What is missing, in one line."),
    body: z.string().max(10_000).optional().describe("Details: what you tried, what you expected, why it matters."),
    contact: z.string().max(200).optional().describe("How the operator may reach you (optional; anonymous is fine)."),
    kind: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,39}$/, "a kind name such as `vaults` (lowercase letters, digits, -)")
      .optional()
      .describe("The kind this request concerns, existing or wished for (the path segment, e.g. `vaults`)."),
  })
  .strict()
  .openapi("FeatureRequest");

export const abuseReportBody = z
  .object({
    url: httpUrl.describe("The public address of this service being reported, e.g. `{PUBLIC_BASE_URL}/p/{public_id}`."),
    reason: z.enum(ABUSE_REASONS).describe("Category of abuse."),
    details: z.string().max(10_000).optional().describe("What is wrong with the content; evidence helps."),
    contact: z.string().max(200).optional().describe("How the operator may reach you (optional; anonymous is fine)."),
  })
  .strict()
  .openapi("AbuseReport");

export const received = z
  .object({
    id: z.string().describe("Id of the stored submission (`fr_…` or `ar_…`)."),
    created_at: z.string().describe("RFC 3339 time it was received."),
    status: z.literal("received"),
  })
  .openapi("AskReceipt");

// Operator side.

export const listQuery = z.object({
  limit: pageLimit(),
  cursor: z
    .string()
    .max(200)
    .optional()
    .describe("`next_cursor` of the previous page; absent for the first page (newest first)."),
});

const clientHash = z
  .string()
  .nullable()
  .describe(
    "Salted SHA-256 of the client IP (never the IP): equal for one client within one UTC day, unlinkable after.",
  );

export const storedFeatureRequest = z
  .object({
    id: z.string(),
    created_at: z.string(),
    status: z.literal("received"),
    title: z.string(),
    body: z.string().nullable(),
    contact: z.string().nullable(),
    kind: z.string().nullable(),
    client_hash: clientHash,
  })
  .openapi("StoredFeatureRequest");

export const storedAbuseReport = z
  .object({
    id: z.string(),
    created_at: z.string(),
    status: z.literal("received"),
    url: z.string(),
    public_id: z
      .string()
      .nullable()
      .describe("The public address the URL names, if it names one: what the operator can disable."),
    public_address_disabled: z.boolean().describe("Whether that public address is disabled now."),
    reason: z.enum(ABUSE_REASONS),
    details: z.string().nullable(),
    contact: z.string().nullable(),
    client_hash: clientHash,
  })
  .openapi("StoredAbuseReport");

export const featureRequestPage = z
  .object({ items: z.array(storedFeatureRequest), next_cursor: z.string().nullable() })
  .openapi("FeatureRequestPage");

export const abuseReportPage = z
  .object({ items: z.array(storedAbuseReport), next_cursor: z.string().nullable() })
  .openapi("AbuseReportPage");

export const publicIdParam = z.object({
  public_id: z
    .string()
    .regex(PUBLIC_ID_PATTERN)
    .openapi({ param: { name: "public_id", in: "path" }, example: "4k2R8h1Zq0Wm3n5T7v9x1y" }),
});

export const disableBody = z
  .object({
    reason: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .describe("Why it is disabled (kept for the record, shown to no one else)."),
  })
  .strict()
  .openapi("DisablePublicAddress");

export const publicAddressState = z
  .object({
    public_id: z.string(),
    url: z.string().describe("`{PUBLIC_BASE_URL}/p/{public_id}`."),
    disabled: z.boolean(),
    reason: z.string().nullable(),
    disabled_at: z.string().nullable(),
  })
  .openapi("PublicAddressState");

export type FeatureRequestInput = z.infer<typeof featureRequestBody>;
export type AbuseReportInput = z.infer<typeof abuseReportBody>;
export type AbuseReason = (typeof ABUSE_REASONS)[number];

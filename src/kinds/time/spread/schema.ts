/** Request and response shapes of spread: members that each fire once per period at a stable hashed offset. */
import { z } from "@hono/zod-openapi";
import { requestFields } from "../../../delivery/outbound";
import { pageLimit, pageOf } from "../../../openapi/schemas";

export const MAX_MEMBERS = 10_000;

export const spreadConfig = z.object({
  url: requestFields.url,
  method: requestFields.method,
  headers: requestFields.headers,
  period_seconds: z
    .int()
    .min(60)
    .max(7 * 86400)
    .describe("Each member fires once per period, at its own offset (like Jenkins' H)."),
});

export type SpreadConfig = z.infer<typeof spreadConfig>;

export const memberKey = z.string().min(1).max(200);

export const addInput = z.object({
  key: memberKey.describe("Names the member; its offset is a hash of it, so the same key always gets the same slot."),
  body: requestFields.body.describe('Sent on each firing; default: {"key": …}.'),
});

export const removeInput = z.object({ key: memberKey.describe("The member to remove (404 when there is none).") });

export const member = z
  .object({
    key: z.string(),
    offset_seconds: z.int().describe("Where in each period this member fires."),
    next_fire_at: z.string(),
    fired: z.int(),
  })
  .openapi("SpreadMember");

export const listInput = z.object({
  limit: pageLimit(50),
  cursor: z.string().max(200).optional().describe("The last key of the previous page."),
});

export const memberPage = pageOf(member).openapi("SpreadMemberPage");

export const previewInput = z.object({
  count: z.coerce.number().int().min(1).max(100).default(10).describe("How many firings (1–100, default 10)."),
});

export const preview = z
  .object({ fires: z.array(z.object({ key: z.string(), at: z.string() })) })
  .openapi("SpreadPreview");

/**
 * `GET /v1/notify/channels`: every channel notify can send through, free and without
 * credentials, from the same registry that parses the URLs (docs/channels.md's table says the same).
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { errorResponses } from "../../../openapi/responses";
import { TAGS } from "../../../openapi/tags";
import { CHANNELS } from "./channels/registry";

const channelEntry = z.object({
  service: z.string(),
  schemes: z.array(z.string()),
  category: z.enum(["chat", "push", "sms", "email", "incident", "home", "webhook"]),
  grammar: z.string().describe("The URL grammar; `[…]` is optional, `…` repeats."),
  docs: z.string().describe("The provider's API reference the request follows."),
  supports: z.object({
    title: z.boolean(),
    format: z.enum(["text", "markdown", "html"]).describe("The richest body format it renders."),
    attach: z.boolean(),
    priority: z.boolean(),
  }),
});

const route = createRoute({
  method: "get",
  path: "/v1/notify/channels",
  tags: [TAGS.address],
  operationId: "notify_channels",
  security: [],
  summary: "Every channel notify sends through, with its URL grammar (free)",
  responses: {
    200: {
      description: "The channels.",
      content: { "application/json": { schema: z.object({ count: z.int(), channels: z.array(channelEntry) }) } },
    },
    ...errorResponses([]),
  },
});

export const channelList = () =>
  CHANNELS.map((c) => ({
    service: c.service,
    schemes: c.schemes,
    category: c.category,
    grammar: c.grammar,
    docs: c.docs,
    supports: c.supports,
  }));

export function registerChannelList(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, (c) =>
    c.json({ count: CHANNELS.length, channels: channelList() }, 200, { "Cache-Control": "public, max-age=3600" }),
  );
}

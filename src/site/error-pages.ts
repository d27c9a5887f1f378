/**
 * `GET /errors/{code}`: what the `type` URI of every problem opens. A short page per error code,
 * what it means and what to do, as HTML for a person's browser and as JSON for an agent (by
 * `Accept`), both from the one error table (http/errors.ts), so a code cannot lack its page.
 */
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { accepts } from "hono/accepts";
import type { AppEnv } from "../env";
import { AppError } from "../http/errors";
import { ERROR_CODES, type ErrorCode } from "../http/error-codes";
import { errorResponses } from "../openapi/responses";
import { escapeHtml, page, STATIC_CSP, topBar } from "./layout";

const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

const errorCodeInfo = z
  .object({
    type: z.string().describe("This page's address: the `type` of every problem with this code."),
    code: z.string(),
    status: z.int(),
    title: z.string(),
    meaning: z.string().describe("What the error means, in one line (Markdown code spans)."),
    what_to_do: z
      .string()
      .describe(
        "What a client does about it, in one line (Markdown code spans); the problem's own `detail` says " +
          "what was wrong with that request.",
      ),
  })
  .openapi("ErrorCodeInfo");

const codeParam = z.object({
  code: z
    .string()
    .max(64)
    .openapi({ param: { name: "code", in: "path" }, example: "payment_required" })
    .describe(`An error code: ${CODES.join(", ")}.`),
});

/** The table's text carries Markdown code spans: shown as <code> in the page. */
const inline = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");

function errorPage(serviceName: string, info: z.infer<typeof errorCodeInfo>): Response {
  const body = `<div class="wrap">
${topBar(serviceName)}
<main id="main">
  <p class="muted">Error code <code>${escapeHtml(info.code)}</code>, HTTP status ${info.status}</p>
  <h1>${escapeHtml(info.title)}</h1>
  <h2>What it means</h2>
  <p>${inline(info.meaning)}</p>
  <h2>What to do</h2>
  <p>${inline(info.what_to_do)}</p>
  <p class="muted">The answer that linked here is <code>application/problem+json</code>: its <code>detail</code> says
  what was wrong with that request, and its <code>request_id</code> names it in the service's logs.</p>
</main>
<footer class="muted">Every status and code is in the <a href="/docs">API reference</a>.</footer>
</div>`;
  return page({
    title: `${info.title} (${info.code}): ${serviceName}`,
    description: info.meaning,
    body,
    csp: STATIC_CSP,
  });
}

export function registerErrorPages(app: OpenAPIHono<AppEnv>): void {
  const route = createRoute({
    method: "get",
    path: "/errors/{code}",
    tags: ["Reference"],
    operationId: "error_code",
    security: [],
    summary: "What an error code means and what to do: the page a problem's `type` opens (free)",
    description:
      "JSON by default and for `Accept: application/json`; an HTML page for `Accept: text/html` (a browser).",
    request: { params: codeParam },
    responses: {
      200: {
        description: "The code's meaning and what to do.",
        headers: { Vary: { description: "`Accept`: JSON or HTML.", schema: { type: "string" } } },
        content: { "application/json": { schema: errorCodeInfo }, "text/html": { schema: z.string() } },
      },
      ...errorResponses([404]),
    },
  });
  app.openapi(route, (c) => {
    const code = c.req.valid("param").code;
    if (!Object.hasOwn(ERROR_CODES, code))
      throw new AppError("not_found", `There is no error code "${code}". The codes are: ${CODES.join(", ")}.`);
    const [status, title, meaning, whatToDo] = ERROR_CODES[code as ErrorCode];
    const info = {
      type: `${new URL(c.req.url).origin}/errors/${code}`,
      code,
      status,
      title,
      meaning,
      what_to_do: whatToDo,
    };
    const wanted = accepts(c, {
      header: "Accept",
      supports: ["application/json", "text/html"],
      default: "application/json",
    });
    const res =
      wanted === "text/html"
        ? errorPage(c.env.SERVICE_NAME, info)
        : c.json(info, 200, { "Cache-Control": "public, max-age=300" });
    res.headers.set("Vary", "Accept");
    return res;
  });
}

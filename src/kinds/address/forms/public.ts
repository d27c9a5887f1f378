/**
 * The form's public address: GET gives the page (or, asked for JSON, the fields a script can
 * post); POST takes a submission from the page (a form post) or a script (JSON). The honeypot
 * filled: answered as taken, and discarded. Checked field by field (the page comes back with the
 * errors, a script gets a 422 naming them); then the address's hourly share (429); then kept and
 * relayed, and thanked (a page, a 303 to redirect_url, or 201 for a script).
 */
import { randomId } from "../../../auth/ids";
import { AppError } from "../../../http/errors";
import { definePublicFace, type PublicAnswer } from "../../../kind/public-face";
import { prefersHtml } from "../../../kind/public-request";
import { gonePage } from "../../../site/layout";
import { formPage, limitedPage, thanksPage } from "./page";
import { addresslessLimit, countSpam, keep, takeRate } from "./store";
import { checkSubmission, readPosted } from "./submission";
import { MAX_SUBMISSION_BYTES, type FormsConfig } from "./schema";

function taken(config: FormsConfig, html: boolean, submissionId: string): PublicAnswer {
  if (html)
    return config.redirect_url
      ? { type: "redirect", location: config.redirect_url, status: 303 }
      : { type: "html", body: thanksPage(config) };
  return {
    type: "json",
    status: 201,
    body: { received: true, submission_id: submissionId, redirect_url: config.redirect_url },
  };
}

export const formsFace = definePublicFace<FormsConfig>({
  routes: [
    {
      name: "form",
      path: "",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["html", "json"],
      summary: "The form as a page (or, with Accept: application/json, its fields).",
    },
    {
      name: "submit",
      path: "",
      methods: ["POST"],
      maxBodyBytes: MAX_SUBMISSION_BYTES,
      answers: ["html", "json", "redirect"],
      summary:
        "A submission: the page's form post, or JSON from a script (201 with its id; 422 naming wrong " +
        "fields; 429 past the hourly share of one address).",
    },
  ],
  handle(store, config, request): PublicAnswer {
    const html = prefersHtml(request);
    if (request.route === "form") {
      if (html || !/json/i.test(request.headers.accept ?? "")) return { type: "html", body: formPage(config) };
      return {
        type: "json",
        body: {
          title: config.title,
          fields: config.fields,
          submit: "POST this address: a form post or a JSON object of field values.",
        },
      };
    }
    const body = request.body instanceof Uint8Array ? request.body : null;
    const posted = readPosted(body, request.headers["content-type"] ?? "");
    if (posted.spam) {
      // Answered as if taken, so a bot learns nothing; kept nowhere.
      countSpam(store.sql);
      return taken(config, html, randomId("sub_"));
    }
    const checked = checkSubmission(config.fields, posted.raw);
    if ("errors" in checked) {
      if (html) return { type: "html", status: 422, body: formPage(config, posted.raw, checked.errors) };
      throw new AppError(
        "validation_failed",
        `The submission does not fit the form: ${checked.errors.map((e) => `${e.path} ${e.message}`).join("; ")}.`,
        { errors: checked.errors },
      );
    }
    const retry = takeRate(store, config, request.clientIp);
    if (retry !== null) {
      const headers = { "retry-after": String(retry) };
      if (html) return { type: "html", status: 429, headers, body: limitedPage(config, retry) };
      return {
        type: "problem",
        code: "rate_limited",
        status: 429,
        headers,
        detail: request.clientIp
          ? `This form takes at most ${config.max_per_ip_per_hour} submissions an hour from one address: try ` +
            `again in ${retry} s.`
          : `This form takes at most ${addresslessLimit(config)} submissions an hour from senders without a ` +
            `client address, together: try again in ${retry} s.`,
      };
    }
    const kept = keep(store, config, checked.data, {
      clientIp: request.clientIp,
      userAgent: request.headers["user-agent"] ?? null,
    });
    return taken(config, html, kept.submission_id);
  },
  errorAnswer(request, error) {
    if (!prefersHtml(request) || (error.status !== 404 && error.status !== 410)) return null;
    return { type: "html", status: error.status, body: gonePage("Form closed", "This form is closed", error.detail) };
  },
});

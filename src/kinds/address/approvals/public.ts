/**
 * The approval's public address: the owner's link (the address itself) and each approver's
 * (`/a/{key}`). GET shows the page; POST decides (a form post from the page, or JSON from a
 * script). The decision is checked and signed first, then recorded only if the request is still
 * pending: the first to commit wins, and everyone after sees what was decided (409).
 */
import { AppError } from "../../../http/errors";
import { definePublicFace, type PublicAnswer, type PublicRequest } from "../../../kind/public-face";
import { postedFields, prefersHtml } from "../../../kind/public-request";
import { iso } from "../../../time";
import { signDecision, type Signed } from "./decision";
import { decidedPage, decisionForm } from "./page";
import { approvalRow, approverOf, settle } from "./store";
import { MAX_COMMENT_CHARS, type ApprovalsConfig, type DecisionPayload } from "./schema";

type Prepared = { signed: Signed } | { error: string } | null;

/** The posted option and comment (form post or JSON); an error a person can read when they do not fit. */
function readChoice(
  config: ApprovalsConfig,
  request: PublicRequest,
): { option: string; comment: string | null } | { error: string } {
  const fields = postedFields(request);
  const option = config.options.find((o) => o.id === fields.option);
  if (!option) return { error: `Choose one of: ${config.options.map((o) => o.id).join(", ")}.` };
  const comment =
    typeof fields.comment === "string" && fields.comment.trim() !== ""
      ? fields.comment.trim().replace(/\r\n/g, "\n")
      : null;
  if (config.comment === "required" && !comment) return { error: "A comment is required with the decision." };
  if (comment && config.comment === "none") return { error: "This request takes no comment." };
  if (
    comment &&
    ([...comment].length > MAX_COMMENT_CHARS || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(comment))
  )
    return { error: `The comment must be text of at most ${MAX_COMMENT_CHARS} characters.` };
  return { option: option.id, comment };
}

function approver(store: { sql: SqlStorage }, request: PublicRequest): string {
  const name = approverOf(store.sql, request.params.key ?? "");
  if (!name) throw new AppError("not_found", "No approver has this link.");
  return name;
}

export const approvalsFace = definePublicFace<ApprovalsConfig, Prepared>({
  routes: [
    {
      name: "page",
      path: "",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["html", "json"],
      summary: "The decision page (the owner's link).",
    },
    {
      name: "decide",
      path: "",
      methods: ["POST"],
      maxBodyBytes: 16 * 1024,
      answers: ["html", "json"],
      summary: "Decide (a form post `option`, `comment`, or JSON): the first decision wins; after it, 409.",
    },
    {
      name: "approver_page",
      path: "/a/{key}",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["html", "json"],
      summary: "The decision page, at one approver's link.",
    },
    {
      name: "approver_decide",
      path: "/a/{key}",
      methods: ["POST"],
      maxBodyBytes: 16 * 1024,
      answers: ["html", "json"],
      summary: "Decide as that approver.",
    },
  ],
  async prepare(ctx, config, request): Promise<Prepared> {
    if (request.method !== "POST" || approvalRow(ctx.sql).state !== "pending") return null;
    const who = approver(ctx, request);
    const choice = readChoice(config, request);
    if ("error" in choice) return choice;
    return { signed: await signDecision(ctx, config, choice.option, choice.comment, who, false) };
  },
  handle(store, config, request, prepared): PublicAnswer {
    const html = prefersHtml(request);
    const who = approver(store, request);
    const row = approvalRow(store.sql);
    const decided = row.decision ? (JSON.parse(row.decision) as DecisionPayload) : null;
    const shown = (d: DecisionPayload, status: number, already: boolean): PublicAnswer => {
      if (html) return { type: "html", status, body: decidedPage(config, d, already) };
      if (status === 409)
        return {
          type: "problem",
          code: "conflict",
          detail:
            `Already decided: ${d.state}${d.option ? ` (${d.option})` : ""} by ${d.decided_by} at ` +
            `${d.decided_at}.`,
        };
      return { type: "json", status, body: { state: d.state, decision: d, jws: approvalRow(store.sql).jws } };
    };
    // GET, and HEAD with it (the public router drops a HEAD answer's body): everything but POST shows the page.
    if (request.method !== "POST") {
      if (decided) return shown(decided, 200, true);
      return html || !/json/i.test(request.headers.accept ?? "")
        ? { type: "html", body: decisionForm(config, who, iso(row.deadline)) }
        : {
            type: "json",
            body: {
              state: "pending",
              title: config.title,
              description: config.description,
              options: config.options,
              comment: config.comment,
              decide_by: iso(row.deadline),
            },
          };
    }
    if (prepared && "error" in prepared) {
      if (html)
        return { type: "html", status: 422, body: decisionForm(config, who, iso(row.deadline), prepared.error) };
      throw new AppError("validation_failed", prepared.error);
    }
    if (prepared && settle(store, config, prepared.signed.decision, prepared.signed.jws))
      return shown(prepared.signed.decision, 200, false);
    const now = approvalRow(store.sql);
    return shown(JSON.parse(now.decision!) as DecisionPayload, 409, true);
  },
});

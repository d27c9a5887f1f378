/**
 * The callback (the redirect_uri): the provider sends the person here with `code` and `state`,
 * or `error`. A state that is not the registered one is refused and changes nothing (anyone can
 * open the address); the first callback with the right state settles the result: the code
 * exchanged for tokens (in the asynchronous step), or kept, or the provider's error. The person
 * sees a page saying they can close the tab, never a token or the code.
 */
import { digestsEqual } from "../../../auth/ids";
import { definePublicFace, type PublicAnswer } from "../../../kind/public-face";
import { escapeHtml, htmlDocument } from "../../../site/layout";
import { exchange } from "./exchange";
import { record, secretsOf, statusOf, type Outcome } from "./store";
import type { OauthConfig } from "./schema";

type Prepared = { outcome: Outcome } | { refused: string } | null;

const PRINTABLE = /^[\u0020-\u007e]*$/;

function page(status: number, heading: string, text: string): PublicAnswer {
  return {
    type: "html",
    status,
    body: htmlDocument({
      title: heading,
      description: heading,
      noindex: true,
      body:
        `<main id="main" class="wrap"><h1>${escapeHtml(heading)}</h1><p role="status" id="result">` +
        `${escapeHtml(text)}</p></main>`,
    }),
  };
}

export const oauthFace = definePublicFace<OauthConfig, Prepared>({
  routes: [
    {
      name: "callback",
      path: "",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["html"],
      summary: "The OAuth redirect_uri: the provider sends the person here with code and state (or error).",
    },
  ],
  async prepare(ctx, config, request): Promise<Prepared> {
    if (statusOf(ctx.sql) !== "pending") return null;
    const q = Object.fromEntries(
      request.query.filter(([k]) => ["code", "state", "error", "error_description"].includes(k)),
    );
    if (Object.values(q).some((v) => v.length > 4096 || !PRINTABLE.test(v)))
      return { refused: "The callback's parameters are malformed." };
    if (!q.state || !digestsEqual(q.state, config.state!))
      return { refused: "This link does not carry the state the request was made with: nothing was changed." };
    if (q.error)
      return {
        outcome: { error: q.error.slice(0, 200), error_description: q.error_description?.slice(0, 1000) ?? null },
      };
    if (!q.code) return { refused: "The callback carries neither a code nor an error." };
    const secrets = secretsOf(ctx.env, ctx.sql);
    return { outcome: config.token_endpoint ? await exchange(ctx, config, secrets, q.code) : { code: q.code } };
  },
  handle(store, _config, _request, prepared): PublicAnswer {
    if (prepared && "refused" in prepared) return page(400, "This sign-in link is not valid", prepared.refused);
    if (!prepared || !record(store, prepared.outcome))
      return page(409, "Already done", "This sign-in was already completed. You can close this tab.");
    // The provider's own words when it gave them; its error code (`access_denied`) only when it did not.
    if ("error" in prepared.outcome) {
      const said = prepared.outcome.error_description ?? prepared.outcome.error;
      return page(
        200,
        "Sign-in did not complete",
        `The provider said: ${said}. You can close this tab; the agent has been told.`,
      );
    }
    return page(200, "You are signed in", "All done: the agent has what it needs. You can close this tab.");
  },
});

/**
 * The responder's address: any method, at the address or below it. A challenge (challenges.ts) is
 * answered and logged; anything else is buffered like an inbox's request, marked verified when it
 * carries a Slack, Twitch or Zoom signature whose secret was given. A refused challenge stores nothing.
 */
import { unseal } from "../../../auth/sealing";
import { definePublicFace, PUBLIC_METHODS, type PublicAnswer } from "../../../kind/public-face";
import { bodyBytes, discardStaged, keep, stage, type Staged } from "../captures/ingest";
import { verify, type Verdict } from "../captures/signatures";
import { answerChallenge, signerOf, type Answered } from "./challenges";
import { LIMITS, logHandshake, sealedSecrets } from "./store";
import { MAX_ITEM_BYTES, type HandshakesConfig, type Secrets } from "./schema";

const METHODS = PUBLIC_METHODS.filter((m) => m !== "HEAD");

type Prepared = { challenge: Answered } | { challenge: null; verdict: Verdict | null; staged: Staged };

export const handshakesFace = definePublicFace<HandshakesConfig, Prepared>({
  routes: [
    {
      name: "receive",
      path: "",
      methods: METHODS,
      maxBodyBytes: MAX_ITEM_BYTES,
      answers: ["json", "text"],
      summary:
        "A provider's challenge is answered (Slack, Meta, Microsoft Graph, X, Zoom, Twitch, Dropbox); " +
        "anything else is buffered in arrival order and answers its seq.",
    },
    {
      name: "receive_below",
      path: "/{path*}",
      methods: METHODS,
      maxBodyBytes: MAX_ITEM_BYTES,
      answers: ["json", "text"],
      summary: "The same, for any path below the address.",
    },
  ],
  async prepare(ctx, _config, request) {
    const sealed = sealedSecrets(ctx.sql);
    const secrets: Secrets = sealed === null ? {} : (JSON.parse(unseal(ctx.env, sealed)) as Secrets);
    const challenge = await answerChallenge(secrets, request);
    if (challenge) return { challenge };
    const signer = signerOf(secrets, request);
    const verdict =
      signer &&
      (await verify(
        signer.provider,
        signer.secret,
        request.headers,
        await bodyBytes(ctx, request.body),
        request.receivedAt,
      ));
    return { challenge: null, verdict, staged: await stage(ctx, LIMITS, request) };
  },
  discard: (ctx, _config, prepared) => discardStaged(ctx, prepared.challenge ? undefined : prepared.staged),
  handle(store, _config, request, prepared): PublicAnswer {
    if (prepared.challenge) {
      logHandshake(store, prepared.challenge.protocol);
      return prepared.challenge.answer;
    }
    const seq = keep(store, LIMITS, request, prepared.staged, prepared.verdict);
    return { type: "json", body: { received: true, seq, verified: prepared.verdict?.verified ?? null } };
  },
});

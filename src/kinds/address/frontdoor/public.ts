/**
 * The front door: POST (or PUT) a message, up to 1 MiB, at the address; the answer is a receipt
 * (202) whose status URL, below the address, tells the sender what became of it. The message is
 * kept like an inbox's request; with an endpoint set it is pushed there in the same transaction
 * (signed, retried until a 2xx), carrying what a pull shows of it. A browser gets a form at the
 * address, and its receipt as a page.
 */
import { randomId } from "../../../auth/ids";
import { AppError } from "../../../http/errors";
import { definePublicFace, type PublicAnswer } from "../../../kind/public-face";
import { prefersHtml } from "../../../kind/public-request";
import { formPage, sentPage } from "./page";
import { discardStaged, keep, stage, type Staged } from "../captures/ingest";
import { captureOf, rowOf } from "../captures/store";
import { endpointOf, LIMITS, receiptOf, recordMessage } from "./store";
import { MAX_MESSAGE_BYTES, PUSH_INLINE_BYTES, type FrontdoorConfig } from "./schema";

interface Prepared {
  staged: Staged;
  receiptId: string;
}

export const frontdoorFace = definePublicFace<FrontdoorConfig, Prepared | null>({
  routes: [
    {
      name: "receipt",
      path: "/receipts/{receipt_id}",
      methods: ["GET"],
      maxBodyBytes: 0,
      summary: "What became of a message: pending, delivered (the agent's endpoint took it) or acknowledged.",
    },
    {
      name: "form",
      path: "",
      methods: ["GET"],
      maxBodyBytes: 0,
      answers: ["html"],
      summary: "A page where a person writes a message (posted as a form).",
    },
    {
      name: "message",
      path: "",
      methods: ["POST", "PUT"],
      maxBodyBytes: MAX_MESSAGE_BYTES,
      answers: ["json", "html"],
      summary:
        "Leave a message for the agent (any content type, up to 1 MiB): 202 with a receipt id and its " +
        "status URL (a page, for a browser).",
    },
  ],
  async prepare(ctx, _config, request) {
    if (request.route !== "message") return null;
    // A push carries a small body itself; a larger one goes by a signed link, so the push stays small.
    return { staged: await stage(ctx, LIMITS, request, PUSH_INLINE_BYTES), receiptId: randomId("rcpt_") };
  },
  discard: (ctx, _config, prepared) => discardStaged(ctx, prepared?.staged),
  handle(store, config, request, prepared): PublicAnswer {
    if (request.route === "form") return { type: "html", body: formPage(config.name) };
    if (!prepared) {
      const receipt = receiptOf(store.sql, request.params.receipt_id ?? "");
      if (!receipt) throw new AppError("not_found", "No message has this receipt.");
      return { type: "json", body: receipt };
    }
    const seq = keep(store, LIMITS, request, prepared.staged);
    const endpoint = endpointOf(store.sql);
    let deliveryId: string | null = null;
    if (endpoint.url) {
      // What a pull shows of it, less the sender's headers and query (they could outgrow an inline push).
      const { headers: _headers, query: _query, ...message } = captureOf(store, rowOf(store.sql, seq, "message"));
      deliveryId = store.send({
        url: endpoint.url,
        method: "POST",
        eventType: "frontdoor.message",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "frontdoor.message", receipt_id: prepared.receiptId, ...message }),
        ...(endpoint.retry_delays ? { retryDelays: endpoint.retry_delays } : {}),
      });
    }
    recordMessage(store.sql, seq, prepared.receiptId, deliveryId);
    const statusUrl = `${store.publicUrl}/receipts/${prepared.receiptId}`;
    if (prefersHtml(request)) return { type: "html", status: 202, body: sentPage(prepared.receiptId, statusUrl) };
    return {
      type: "json",
      status: 202,
      body: { received: true, receipt_id: prepared.receiptId, status_url: statusUrl, pushed: deliveryId !== null },
    };
  },
});

import { channel, json, withQuery } from "../channel";
import { asMarkdown } from "../message";

/**
 * Microsoft Teams through a Workflows (Power Automate) webhook: an Adaptive Card message. Teams' old connectors
 * (msteams://) are retired.
 */
export default channel({
  schemes: ["workflows", "workflow"],
  service: "Microsoft Teams (Workflows)",
  category: "chat",
  grammar: "workflows://host[:port]/workflow/signature[?ver=2016-06-01]",
  docs: "https://learn.microsoft.com/en-us/power-automate/teams/send-a-message-in-teams",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({
    origin: u.origin(true),
    workflow: u.need(u.segments[0], "the workflow id"),
    sig: u.secret(u.segments[1] ?? u.param("signature", "sig"), "the signature"),
    ver: u.param("ver", "api-version") ?? "2016-06-01",
  }),
  request(t, m) {
    const body = [
      ...(m.title ? [{ type: "TextBlock", text: m.title, weight: "Bolder", size: "Large", wrap: true }] : []),
      { type: "TextBlock", text: asMarkdown(m), wrap: true },
    ];
    const url = withQuery(`${t.origin}/workflows/${encodeURIComponent(t.workflow)}/triggers/manual/paths/invoke`, {
      "api-version": t.ver,
      sp: "/triggers/manual/run",
      sv: "1.0",
      sig: t.sig,
    });
    return json(url, {
      type: "message",
      attachments: [
        {
          contentType: "application/vnd.microsoft.card.adaptive",
          contentUrl: null,
          content: {
            $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
            type: "AdaptiveCard",
            version: "1.4",
            body,
            msteams: { width: "full" },
          },
        },
      ],
    });
  },
});

import { channel, json } from "../channel";
import { asMarkdown, clip } from "../message";

/** Guilded's webhooks take Discord's payload. */
export default channel({
  schemes: ["guilded"],
  service: "Guilded",
  category: "chat",
  grammar: "guilded://[botname@]webhook_id/webhook_token",
  docs: "https://support.guilded.gg/hc/en-us/articles/360038927934-Webhooks",
  supports: { title: true, format: "markdown", attach: true, priority: false },
  parse: (u) => ({
    id: u.need(u.host, "the webhook id"),
    token: u.secret(u.segments[0], "the webhook token"),
    botname: u.user,
  }),
  request: (t, m) =>
    json(`https://media.guilded.gg/webhooks/${t.id}/${t.token}`, {
      content: clip(asMarkdown(m), 2000),
      ...(m.title || m.attach
        ? { embeds: [{ ...(m.title ? { title: m.title } : {}), ...(m.attach ? { image: { url: m.attach } } : {}) }] }
        : {}),
      ...(t.botname ? { username: t.botname } : {}),
    }),
});

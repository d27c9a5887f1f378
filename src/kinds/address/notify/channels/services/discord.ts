import { channel, json } from "../channel";
import { asMarkdown, clip } from "../message";

export default channel({
  schemes: ["discord"],
  service: "Discord",
  category: "chat",
  grammar: "discord://[botname@]webhook_id/webhook_token[?avatar_url=…]",
  docs: "https://discord.com/developers/docs/resources/webhook#execute-webhook",
  supports: { title: true, format: "markdown", attach: true, priority: false },
  parse: (u) => ({
    id: u.need(u.host, "the webhook id"),
    token: u.secret(u.segments[0], "the webhook token"),
    botname: u.user,
    avatar: u.param("avatar_url"),
  }),
  request(t, m) {
    // Content up to 2,000 characters; a title and an image go in an embed.
    const embed =
      m.title || m.attach
        ? [{ ...(m.title ? { title: clip(m.title, 256) } : {}), ...(m.attach ? { image: { url: m.attach } } : {}) }]
        : undefined;
    return json(`https://discord.com/api/webhooks/${t.id}/${t.token}?wait=true`, {
      content: clip(asMarkdown(m), 2000),
      ...(embed ? { embeds: embed } : {}),
      ...(t.botname ? { username: t.botname } : {}),
      ...(t.avatar ? { avatar_url: t.avatar } : {}),
    });
  },
});

import { channel, json } from "../channel";
import { asMarkdown, clip } from "../message";

export default channel({
  schemes: ["revolt"],
  service: "Revolt",
  category: "chat",
  grammar: "revolt://bot_token/channel_id[/channel_id…]",
  docs: "https://developers.revolt.chat/api/#tag/Messaging/operation/message_send_message_send",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({
    token: u.secret(u.host, "the bot token"),
    channels: u.segments.length ? u.segments : [u.need(null, "a channel id")],
  }),
  request: (t, m) =>
    t.channels.map((ch) =>
      json(
        `https://api.revolt.chat/channels/${encodeURIComponent(ch)}/messages`,
        { content: clip(m.title ? `${m.title}\n${asMarkdown(m)}` : asMarkdown(m), 2000) },
        { "x-bot-token": t.token },
      ),
    ),
});

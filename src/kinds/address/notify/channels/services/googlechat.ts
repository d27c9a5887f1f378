import { channel, json, withQuery } from "../channel";
import { asMarkdown } from "../message";

export default channel({
  schemes: ["gchat"],
  service: "Google Chat",
  category: "chat",
  grammar: "gchat://workspace/webhook_key/webhook_token[/thread_key]",
  docs: "https://developers.google.com/workspace/chat/quickstart/webhooks",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({
    space: u.need(u.host, "the workspace"),
    key: u.secret(u.segments[0], "the webhook key"),
    token: u.secret(u.segments[1], "the webhook token"),
    thread: u.segments[2] ?? null,
  }),
  request: (t, m) =>
    json(
      withQuery(`https://chat.googleapis.com/v1/spaces/${encodeURIComponent(t.space)}/messages`, {
        key: t.key,
        token: t.token,
        threadKey: t.thread,
        ...(t.thread ? { messageReplyOption: "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD" } : {}),
      }),
      { text: m.title ? `*${m.title}*\n${asMarkdown(m)}` : asMarkdown(m) },
      { "content-type": "application/json; charset=utf-8" },
    ),
});

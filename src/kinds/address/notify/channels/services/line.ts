import { bearer, channel, json } from "../channel";
import { clip, titled } from "../message";

/** The Messaging API's push message, one call per recipient (user, group or room id). */
export default channel({
  schemes: ["line"],
  service: "LINE",
  category: "chat",
  grammar: "line://channel_access_token/to_id[/to_id…]",
  docs: "https://developers.line.biz/en/reference/messaging-api/#send-push-message",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    token: u.secret(u.host, "the channel access token"),
    targets: u.segments.length ? u.segments : [u.need(null, "a recipient id")],
  }),
  request: (t, m) =>
    t.targets.map((to) =>
      json(
        "https://api.line.me/v2/bot/message/push",
        { to, messages: [{ type: "text", text: clip(titled(m), 5000) }] },
        { authorization: bearer(t.token) },
      ),
    ),
});

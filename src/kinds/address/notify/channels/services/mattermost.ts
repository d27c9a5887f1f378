import { channel, json } from "../channel";
import { asMarkdown } from "../message";

export default channel({
  schemes: ["mmost", "mmosts"],
  service: "Mattermost",
  category: "chat",
  grammar: "mmost[s]://[botname@]host[:port][/path]/webhook_token[?channel=town-square]",
  docs: "https://developers.mattermost.com/integrate/webhooks/incoming/",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse(u) {
    const token = u.secret(u.segments[u.segments.length - 1], "the webhook token");
    const path = u.segments.slice(0, -1).map(encodeURIComponent).join("/");
    return {
      url: `${u.origin()}/${path ? `${path}/` : ""}hooks/${token}`,
      botname: u.user,
      channels: (u.param("channel", "channels") ?? "").split(",").filter(Boolean),
    };
  },
  request(t, m) {
    const payload = {
      text: m.title ? `##### ${m.title}\n${asMarkdown(m)}` : asMarkdown(m),
      ...(t.botname ? { username: t.botname } : {}),
    };
    return t.channels.length ? t.channels.map((channel) => json(t.url, { ...payload, channel })) : json(t.url, payload);
  },
});

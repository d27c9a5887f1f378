import { channel, type ChannelRequest } from "../channel";
import { parseCustom, messageType, remap } from "../custom";
import { asText } from "../message";

export default channel({
  schemes: ["json", "jsons"],
  service: "JSON webhook",
  category: "webhook",
  grammar: "json[s]://[user:password@]host[:port]/path[?+Header=v&-param=v&:field=rename&method=POST]",
  docs: "https://github.com/caronc/apprise/wiki/Notify_Custom_JSON",
  supports: { title: true, format: "text", attach: false, priority: true },
  parse: parseCustom,
  request(t, m): ChannelRequest {
    const payload = remap(
      { version: "1.0", title: m.title ?? "", message: asText(m), attachments: [], type: messageType(m) },
      t.fields,
    );
    return {
      method: t.method,
      url: t.url,
      headers: { "content-type": "application/json", ...t.headers },
      body: JSON.stringify(payload),
    };
  },
});

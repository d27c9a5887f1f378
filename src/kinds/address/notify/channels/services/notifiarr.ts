import { channel, json } from "../channel";
import { asText } from "../message";

/** Notifiarr's passthrough: a Discord message through Notifiarr's bot, per channel id. */
export default channel({
  schemes: ["notifiarr"],
  service: "Notifiarr",
  category: "chat",
  grammar: "notifiarr://api_key/discord_channel_id[/…]",
  docs: "https://notifiarr.wiki/en/Website/Integrations/Passthrough",
  supports: { title: true, format: "text", attach: true, priority: false },
  parse: (u) => ({
    key: u.secret(u.host, "the API key"),
    channels: u.segments.length ? u.segments.map(Number) : [Number(u.need(null, "a Discord channel id"))],
  }),
  request: (t, m) =>
    t.channels.map((channel) =>
      json(
        "https://notifiarr.com/api/v1/notification/apprise",
        {
          notification: { update: false, name: "Zeitvault", event: m.id },
          discord: {
            color: "",
            ping: {},
            images: m.attach ? { thumbnail: "", image: m.attach } : {},
            text: { title: m.title ?? "", content: "", description: asText(m), footer: "" },
            ids: { channel },
          },
        },
        { "x-api-key": t.key },
      ),
    ),
});

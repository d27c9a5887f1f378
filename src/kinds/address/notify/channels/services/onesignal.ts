import { channel, json } from "../channel";
import { asText, level } from "../message";

/** To subscription ids, external user ids (@name) or segments (#name). */
export default channel({
  schemes: ["onesignal"],
  service: "OneSignal",
  category: "push",
  grammar: "onesignal://app_id@rest_api_key/player_id|@external_id|#segment[/…]",
  docs: "https://documentation.onesignal.com/reference/push-notification",
  supports: { title: true, format: "text", attach: true, priority: true },
  parse: (u) => ({
    app: u.need(u.user, "the app id"),
    key: u.secret(u.host, "the REST API key"),
    targets: u.segments.length ? u.segments : ["#All"],
  }),
  request(t, m) {
    const players = t.targets.filter((x) => !/^[@#]/.test(x));
    const users = t.targets.filter((x) => x.startsWith("@")).map((x) => x.slice(1));
    const segments = t.targets.filter((x) => x.startsWith("#")).map((x) => x.slice(1));
    return json(
      "https://api.onesignal.com/notifications",
      {
        app_id: t.app,
        contents: { en: asText(m) },
        ...(m.title ? { headings: { en: m.title } } : {}),
        priority: level(m.priority, [1, 3, 5, 8, 10]),
        ...(players.length ? { include_subscription_ids: players } : {}),
        ...(users.length ? { include_aliases: { external_id: users }, target_channel: "push" } : {}),
        ...(segments.length ? { included_segments: segments } : {}),
        ...(m.attach ? { big_picture: m.attach, ios_attachments: { image: m.attach } } : {}),
      },
      { authorization: `Key ${t.key}` },
    );
  },
});

import { channel, json, withQuery } from "../channel";
import { asText } from "../message";

/** To device tokens, or topics (#name). */
export default channel({
  schemes: ["pushy"],
  service: "Pushy",
  category: "push",
  grammar: "pushy://secret_api_key/device_token|#topic[/…]",
  docs: "https://pushy.me/docs/api/send-notifications",
  supports: { title: true, format: "text", attach: false, priority: false },
  parse: (u) => ({
    key: u.secret(u.host, "the secret API key"),
    targets: u.segments.length ? u.segments : [u.need(null, "a device token or #topic")],
  }),
  request: (t, m) =>
    t.targets.map((x) => ({
      ...json(withQuery("https://api.pushy.me/push", { api_key: t.key }), {
        to: x.startsWith("#") ? `/topics/${x.slice(1)}` : x,
        data: { message: asText(m) },
        notification: { body: asText(m), ...(m.title ? { title: m.title } : {}) },
      }),
      okWhen: { field: "success", equals: true },
    })),
});

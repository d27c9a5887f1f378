import { bearer, channel, json } from "../channel";
import { asMarkdown } from "../message";

/** A persistent notification, or a notify service (`/notify.mobile_app_phone`) per target. */
export default channel({
  schemes: ["hassio", "hassios"],
  service: "Home Assistant",
  category: "home",
  grammar: "hassio[s]://host[:port]/long_lived_access_token[/notify.service…]",
  docs: "https://developers.home-assistant.io/docs/api/rest/",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({
    origin: u.origin(),
    token: u.secret(u.segments[0], "a long-lived access token"),
    services: u.segments.slice(1),
    nid: u.param("nid"),
  }),
  request(t, m) {
    const auth = { authorization: bearer(t.token) };
    const message = { title: m.title ?? "", message: asMarkdown(m) };
    if (!t.services.length)
      return json(
        `${t.origin}/api/services/persistent_notification/create`,
        { ...message, notification_id: t.nid ?? m.id },
        auth,
      );
    return t.services.map((s) => {
      const [domain, service] = s.includes(".") ? s.split(".", 2) : ["notify", s];
      return json(
        `${t.origin}/api/services/${encodeURIComponent(domain!)}/${encodeURIComponent(service!)}`,
        message,
        auth,
      );
    });
  },
});

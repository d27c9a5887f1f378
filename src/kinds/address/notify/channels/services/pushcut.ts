import { channel, json } from "../channel";
import { asText } from "../message";

export default channel({
  schemes: ["pushcut"],
  service: "Pushcut",
  category: "push",
  grammar: "pushcut://api_key/notification_name[/device…]",
  docs: "https://www.pushcut.io/webapi",
  supports: { title: true, format: "text", attach: true, priority: false },
  parse: (u) => ({
    key: u.secret(u.host, "the API key"),
    name: u.need(u.segments[0], "the notification's name"),
    devices: u.segments.slice(1),
  }),
  request: (t, m) =>
    json(
      `https://api.pushcut.io/v1/notifications/${encodeURIComponent(t.name)}`,
      {
        ...(m.title ? { title: m.title } : {}),
        text: asText(m),
        ...(m.attach ? { image: m.attach } : {}),
        ...(t.devices.length ? { devices: t.devices } : {}),
      },
      { "api-key": t.key },
    ),
});

import { channel, form } from "../channel";
import { asHtml, asText, clip, level } from "../message";

/** Emergency priority (2) retries every 60 s for an hour, as Pushover requires both for it. */
export default channel({
  schemes: ["pover"],
  service: "Pushover",
  category: "push",
  grammar: "pover://user_key@app_token[/device…][?sound=…]",
  docs: "https://pushover.net/api",
  supports: { title: true, format: "html", attach: true, priority: true },
  parse: (u) => ({
    user: u.secret(u.user, "the user key"),
    token: u.secret(u.host, "the application token"),
    devices: u.segments,
    sound: u.param("sound"),
  }),
  request(t, m) {
    const priority = level(m.priority, [-2, -1, 0, 1, 2]);
    return {
      ...form("https://api.pushover.net/1/messages.json", {
        token: t.token,
        user: t.user,
        message: clip(m.format === "text" ? asText(m) : asHtml(m), 1024),
        html: m.format === "text" ? undefined : 1,
        title: m.title ? clip(m.title, 250) : undefined,
        priority,
        device: t.devices.join(",") || undefined,
        sound: t.sound ?? undefined,
        url: m.attach ?? undefined,
        ...(priority === 2 ? { retry: 60, expire: 3600 } : {}),
      }),
      okWhen: { field: "status", equals: 1 },
    };
  },
});

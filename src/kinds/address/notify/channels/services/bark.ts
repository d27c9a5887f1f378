import { channel, json } from "../channel";
import { asText, level } from "../message";

/** A Bark server (api.day.app or self-hosted), one push per device key. */
export default channel({
  schemes: ["bark", "barks"],
  service: "Bark",
  category: "push",
  grammar: "bark[s]://host[:port]/device_key[/device_key…][?sound=…&group=…]",
  docs: "https://bark.day.app/#/en-us/tutorial",
  supports: { title: true, format: "text", attach: true, priority: true },
  parse: (u) => ({
    origin: u.origin(),
    keys: u.segments.length ? u.segments.map((k) => u.secret(k, "a device key")) : [u.need(null, "a device key")],
    sound: u.param("sound"),
    group: u.param("group"),
  }),
  request: (t, m) =>
    t.keys.map((device_key) =>
      json(`${t.origin}/push`, {
        device_key,
        title: m.title ?? "",
        body: asText(m),
        level: level(m.priority, ["passive", "passive", "active", "timeSensitive", "critical"]),
        ...(t.sound ? { sound: t.sound } : {}),
        ...(t.group ? { group: t.group } : {}),
        ...(m.attach ? { url: m.attach } : {}),
      }),
    ),
});

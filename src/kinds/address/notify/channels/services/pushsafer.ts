import { channel, form } from "../channel";
import { asText, level } from "../message";

export default channel({
  schemes: ["psafers", "psafer"],
  service: "Pushsafer",
  category: "push",
  grammar: "psafer[s]://private_key[/device_id|/group_id…][?sound=…&vibration=…]",
  docs: "https://www.pushsafer.com/en/pushapi",
  supports: { title: true, format: "text", attach: true, priority: true },
  parse: (u) => ({
    key: u.secret(u.host, "the private key"),
    device: u.segments.join("|") || "a",
    sound: u.param("sound"),
    vibration: u.param("vibration"),
  }),
  request: (t, m) => ({
    ...form(`https://www.pushsafer.com/api`, {
      k: t.key,
      d: t.device,
      t: m.title ?? "",
      m: asText(m),
      pr: level(m.priority, [-2, -1, 0, 1, 2]),
      s: t.sound,
      v: t.vibration,
      ...(m.attach ? { u: m.attach, ut: "attachment" } : {}),
    }),
    okWhen: { field: "status", equals: 1 },
  }),
});

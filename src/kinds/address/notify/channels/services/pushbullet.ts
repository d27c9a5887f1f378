import { channel, json } from "../channel";
import { asText } from "../message";

/** A note (or a link, with an attachment URL) to all devices, or per device / e-mail / #channel. */
export default channel({
  schemes: ["pbul"],
  service: "Pushbullet",
  category: "push",
  grammar: "pbul://access_token[/device_iden|/email|/#channel…]",
  docs: "https://docs.pushbullet.com/#create-push",
  supports: { title: true, format: "text", attach: true, priority: false },
  parse: (u) => ({ token: u.secret(u.host, "the access token"), targets: u.segments }),
  request(t, m) {
    const push = {
      type: m.attach ? "link" : "note",
      title: m.title ?? "",
      body: asText(m),
      ...(m.attach ? { url: m.attach } : {}),
    };
    const one = (target: Record<string, string>) =>
      json("https://api.pushbullet.com/v2/pushes", { ...push, ...target }, { "access-token": t.token });
    if (!t.targets.length) return one({});
    return t.targets.map((x) =>
      one(x.startsWith("#") ? { channel_tag: x.slice(1) } : x.includes("@") ? { email: x } : { device_iden: x }),
    );
  },
});

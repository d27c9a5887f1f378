import { channel, withQuery } from "../channel";
import { asText } from "../message";

/** Joaoapps Join: a push to devices (ids, names, or group.all / group.android …). */
export default channel({
  schemes: ["join"],
  service: "Join",
  category: "push",
  grammar: "join://api_key[/device_id|/group.all…]",
  docs: "https://joaoapps.com/join/api/",
  supports: { title: true, format: "text", attach: true, priority: false },
  parse: (u) => ({ key: u.secret(u.host, "the API key"), devices: u.segments.length ? u.segments : ["group.all"] }),
  request: (t, m) =>
    t.devices.map((d) => ({
      method: "GET" as const,
      headers: {},
      body: null,
      url: withQuery("https://joinjoaomgcd.appspot.com/_ah/api/messaging/v1/sendPush", {
        apikey: t.key,
        ...(/^group\./.test(d) ? { deviceId: d } : /^[a-f0-9]{32}$/.test(d) ? { deviceId: d } : { deviceNames: d }),
        title: m.title ?? undefined,
        text: asText(m),
        image: m.attach,
      }),
      okWhen: { field: "success", equals: true },
    })),
});

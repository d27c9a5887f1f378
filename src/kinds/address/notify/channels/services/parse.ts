import { channel, json } from "../channel";
import { asText } from "../message";

/** The path's segments, then parse/push: a path that already ends in /parse gets no second one. */
function pushPath(segments: readonly string[]): string[] {
  const all = [...segments.map(encodeURIComponent), "parse", "push"];
  return all.filter((s, i, a) => !(s === "parse" && a[i - 1] === "parse"));
}

/** Parse Server's push, to every installation of the given device type. */

export default channel({
  schemes: ["parsep", "parseps"],
  service: "Parse Platform",
  category: "push",
  grammar: "parsep[s]://app_id:master_key@host[:port][/path][?device=all|ios|android]",
  docs: "https://docs.parseplatform.org/rest/guide/#sending-pushes",
  supports: { title: true, format: "text", attach: false, priority: false },
  parse: (u) => ({
    url: `${u.origin()}/${pushPath(u.segments).join("/")}`,
    app: u.need(u.user, "the application id"),
    key: u.secret(u.password, "the master key"),
    device: u.param("device") ?? "all",
  }),
  request: (t, m) =>
    json(
      t.url,
      {
        where: { deviceType: { $in: t.device === "all" ? ["ios", "android"] : [t.device] } },
        data: { title: m.title ?? "", alert: asText(m) },
      },
      { "x-parse-application-id": t.app, "x-parse-master-key": t.key },
    ),
});

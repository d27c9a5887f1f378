import { channel, json } from "../channel";
import { titled } from "../message";

/** LaMetric's cloud (an Indicator app's push URL); a device on the local network is not reachable from a Worker. */
export default channel({
  schemes: ["lametric", "lametrics"],
  service: "LaMetric (cloud)",
  category: "home",
  grammar: "lametric://app_access_token@app_id[/app_version]",
  docs: "https://lametric-documentation.readthedocs.io/en/latest/guides/first-steps/first-lametric-indicator-app.html",
  supports: { title: false, format: "text", attach: false, priority: false },
  parse: (u) => ({
    token: u.secret(u.user, "the app access token"),
    app: u.need(u.host, "the app id"),
    version: u.segments[0] ?? "1",
  }),
  request: (t, m) =>
    json(
      `https://developer.lametric.com/api/v1/dev/widget/update/com.lametric.${encodeURIComponent(t.app)}/` +
        `${encodeURIComponent(t.version)}`,
      {
        frames: [{ icon: "i9182", text: titled(m).replace(/\n/g, " "), index: 0 }],
      },
      { "x-access-token": t.token, accept: "application/json" },
    ),
});

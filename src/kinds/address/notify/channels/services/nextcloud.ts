import { basic, channel, form } from "../channel";
import { asText, clip } from "../message";

/** An admin notification to each user (the admin_notifications API). */
export default channel({
  schemes: ["ncloud", "nclouds"],
  service: "Nextcloud",
  category: "home",
  grammar: "ncloud[s]://user:password@host[:port]/to_user[/to_user…]",
  docs: "https://github.com/nextcloud/notifications/blob/master/docs/admin-notifications.md",
  supports: { title: true, format: "text", attach: false, priority: false },
  parse: (u) => ({
    origin: u.origin(),
    auth: basic(u.secret(u.user, "a user"), u.secret(u.password, "a password")),
    users: u.segments.length ? u.segments : [u.need(null, "a user to notify")],
  }),
  request: (t, m) =>
    t.users.map((user) =>
      form(
        `${t.origin}/ocs/v2.php/apps/admin_notifications/api/v1/notifications/${encodeURIComponent(user)}`,
        {
          shortMessage: clip(m.title ?? asText(m), 255),
          longMessage: m.title ? asText(m) : undefined,
        },
        { authorization: t.auth, "ocs-apirequest": "true" },
      ),
    ),
});

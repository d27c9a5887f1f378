import { channel, json } from "../channel";
import { asMarkdown } from "../message";

export default channel({
  schemes: ["misskey", "misskeys"],
  service: "Misskey",
  category: "chat",
  grammar: "misskey[s]://access_token@host[:port][?visibility=public|home|followers|specified]",
  docs: "https://misskey-hub.net/en/docs/for-developers/api/",
  supports: { title: true, format: "markdown", attach: false, priority: false },
  parse: (u) => ({
    origin: u.origin(),
    token: u.secret(u.user, "the access token"),
    visibility: u.param("visibility") ?? "public",
  }),
  request: (t, m) =>
    json(`${t.origin}/api/notes/create`, {
      i: t.token,
      text: m.title ? `${m.title}\n${asMarkdown(m)}` : asMarkdown(m),
      visibility: t.visibility,
    }),
});

import { channel, json } from "../channel";
import { asHtml, asMarkdown, asText } from "../message";

/** To users (UID_…) and topics (numeric ids). */
export default channel({
  schemes: ["wxpusher"],
  service: "WxPusher",
  category: "push",
  grammar: "wxpusher://app_token/UID_xxx|topic_id[/…]",
  docs: "https://wxpusher.zjiecode.com/docs/#/?id=%e5%8f%91%e9%80%81%e6%b6%88%e6%81%af",
  supports: { title: true, format: "html", attach: false, priority: false },
  parse: (u) => ({
    token: u.secret(u.host, "the app token"),
    uids: u.segments.filter((s) => s.startsWith("UID_")),
    topics: u.segments.filter((s) => /^\d+$/.test(s)).map(Number),
  }),
  request: (t, m) => ({
    ...json("https://wxpusher.zjiecode.com/api/send/message", {
      appToken: t.token,
      content: m.format === "html" ? asHtml(m) : m.format === "markdown" ? asMarkdown(m) : asText(m),
      summary: m.title ?? asText(m).slice(0, 20),
      contentType: m.format === "html" ? 2 : m.format === "markdown" ? 3 : 1,
      topicIds: t.topics,
      uids: t.uids,
    }),
    okWhen: { field: "code", equals: 1000 },
  }),
});

import { bearer, channel, json } from "../channel";
import { slackBody, slackEscape } from "../slack-mrkdwn";
import { ChannelUrlError } from "../url";

/** Incoming webhook (three tokens) or a bot/user token (xoxb-/xoxp-) posting with chat.postMessage. */
export default channel({
  schemes: ["slack"],
  service: "Slack",
  category: "chat",
  grammar: "slack://[botname@]TokenA/TokenB/TokenC[/#channel] · slack://xoxb-token/#channel[/@user…]",
  docs: "https://api.slack.com/messaging/webhooks · https://api.slack.com/methods/chat.postMessage",
  supports: { title: true, format: "markdown", attach: true, priority: false },
  parse(u) {
    const all = [u.host, ...u.segments];
    if (/^xox[abp]-/.test(u.host)) {
      const channels = u.segments.length ? u.segments : [];
      if (!channels.length) throw new ChannelUrlError("needs a #channel or @user to post to with a bot token");
      return { mode: "bot" as const, token: u.secret(u.host, "a bot token"), channels, botname: u.user };
    }
    const [a, b, c, ...channels] = all;
    return {
      mode: "webhook" as const,
      tokens: [u.secret(a, "token A"), u.secret(b, "token B"), u.secret(c, "token C")],
      channels,
      botname: u.user,
    };
  },
  request(t, m) {
    // mrkdwn: Markdown converted (`**b**` → `*b*`, links `<url|text>`), and &, <, > escaped in all text.
    const text = m.title ? `*${slackEscape(m.title)}*\n${slackBody(m)}` : slackBody(m);
    const extra = {
      ...(t.botname ? { username: t.botname } : {}),
      ...(m.attach ? { attachments: [{ image_url: m.attach, fallback: m.attach }] } : {}),
    };
    if (t.mode === "bot") {
      return t.channels.map((ch) => ({
        ...json(
          "https://slack.com/api/chat.postMessage",
          { channel: ch, text, mrkdwn: true, ...extra },
          { authorization: bearer(t.token) },
        ),
        okWhen: { field: "ok", equals: true },
      }));
    }
    const url = `https://hooks.slack.com/services/${t.tokens.join("/")}`;
    if (!t.channels.length) return json(url, { text, mrkdwn: true, ...extra });
    return t.channels.map((ch) => json(url, { text, mrkdwn: true, channel: ch, ...extra }));
  },
});

import { channel, json } from "../channel";
import { asHtml, clip, escapeHtmlText, level } from "../message";

/** One sendMessage (or sendPhoto, with an attachment) per chat; HTML parse mode, 4,096 characters. */
export default channel({
  schemes: ["tgram"],
  service: "Telegram",
  category: "chat",
  grammar: "tgram://bot_token/chat_id[/chat_id…][?silent=yes&preview=no&topic=thread_id]",
  docs: "https://core.telegram.org/bots/api#sendmessage",
  supports: { title: true, format: "html", attach: true, priority: true },
  parse: (u) => ({
    token: u.secret(u.host, "the bot token"),
    chats: u.need(u.segments.join(",") || null, "a chat id").split(","),
    topic: u.param("topic", "thread"),
    silent: u.flag("silent"),
    preview: u.flag("preview"),
  }),
  request(t, m) {
    const html = asHtml(m).replace(/<\/?(p|h[1-6]|ul|ol|li)[^>]*>/g, (tag) =>
      tag.startsWith("</") && tag !== "</li>" ? "\n" : tag === "<li>" ? "• " : "",
    );
    const text = clip(m.title ? `<b>${escapeHtmlText(m.title)}</b>\n${html}` : html, 4096);
    // `?silent=` decides when given (yes/no, true/false …); else the two lowest priorities arrive without a sound.
    const silent = t.silent ?? level(m.priority, [true, true, false, false, false]);
    const base = `https://api.telegram.org/bot${t.token}`;
    return t.chats.map((chat_id) => {
      const common = {
        chat_id,
        parse_mode: "HTML",
        disable_notification: silent,
        ...(t.topic ? { message_thread_id: Number(t.topic) } : {}),
        ...(t.preview === null ? {} : { disable_web_page_preview: !t.preview }),
      };
      const req = m.attach
        ? json(`${base}/sendPhoto`, { ...common, photo: m.attach, caption: clip(text, 1024) })
        : json(`${base}/sendMessage`, { ...common, text });
      return { ...req, okWhen: { field: "ok", equals: true } };
    });
  },
});

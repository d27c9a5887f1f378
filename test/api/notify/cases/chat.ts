/** Chat services. */
import { MESSAGE, TEXT, type Case } from "./common";

const MD = "**92%** used on db-1";
/** The same in Slack's mrkdwn, where bold is one asterisk. */
const SLACK_MD = "*92%* used on db-1";
const TITLED = `${MESSAGE.title}\n${TEXT}`;

export const CHAT: Case[] = [
  {
    name: "slack (webhook)",
    url: "slack://T0001/B0001/slacksecret1/#alerts",
    expect: {
      path: "/hooks.slack.com/services/T0001/B0001/slacksecret1",
      json: { text: `*${MESSAGE.title}*\n${SLACK_MD}`, channel: "#alerts", mrkdwn: true },
    },
  },
  {
    name: "slack (bot token)",
    url: "slack://xoxb-1234-slackbot/#ops",
    expect: {
      path: "/slack.com/api/chat.postMessage",
      find: "xoxb-1234-slackbot",
      headers: { authorization: "Bearer xoxb-1234-slackbot" },
      json: { channel: "#ops", text: `*${MESSAGE.title}*\n${SLACK_MD}` },
    },
  },
  {
    name: "discord",
    url: "discord://112233/discordsecret1",
    expect: {
      path: "/discord.com/api/webhooks/112233/discordsecret1?wait=true",
      json: { content: MD, embeds: [{ title: MESSAGE.title }] },
    },
  },
  {
    name: "telegram",
    url: "tgram://123456:tgramsecret1/-100200/300",
    expect: [
      {
        path: "/api.telegram.org/bot123456:tgramsecret1/sendMessage",
        find: '"chat_id":"-100200"',
        json: {
          chat_id: "-100200",
          parse_mode: "HTML",
          text: `<b>${MESSAGE.title}</b>\n<strong>92%</strong> used on db-1\n`,
          disable_notification: false,
        },
      },
      {
        path: "/api.telegram.org/bot123456:tgramsecret1/sendMessage",
        find: '"chat_id":"300"',
        json: { chat_id: "300" },
      },
    ],
  },
  {
    name: "microsoft teams (workflows)",
    url: "workflows://prod-01.westus.logic.azure.com:443/wf123abc/wfsigSecret",
    expect: {
      path:
        "/prod-01.westus.logic.azure.com/workflows/wf123abc/triggers/manual/paths/invoke?api-version=2016-06-" +
        "01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=wfsigSecret",
      json: {
        type: "message",
        attachments: [
          {
            contentType: "application/vnd.microsoft.card.adaptive",
            contentUrl: null,
            content: {
              $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
              type: "AdaptiveCard",
              version: "1.4",
              msteams: { width: "full" },
              body: [
                { type: "TextBlock", text: MESSAGE.title, weight: "Bolder", size: "Large", wrap: true },
                { type: "TextBlock", text: MD, wrap: true },
              ],
            },
          },
        ],
      },
    },
  },
  {
    name: "rocket.chat",
    url: "rockets://rocketHookToken@chat.example/#general",
    expect: {
      path: "/chat.example/hooks/rocketHookToken",
      json: { text: `*${MESSAGE.title}*\n${MD}`, channel: "#general" },
    },
  },
  {
    name: "mattermost",
    url: "mmosts://alertbot@mm.example/mmostHookToken?channel=ops",
    expect: {
      path: "/mm.example/hooks/mmostHookToken",
      json: { text: `##### ${MESSAGE.title}\n${MD}`, username: "alertbot", channel: "ops" },
    },
  },
  {
    name: "zulip",
    url: "zulip://alerts@acme/zulipBotKey/ops",
    expect: {
      path: "/acme.zulipchat.com/api/v1/messages",
      headers: { authorization: `Basic ${btoa("alerts-bot@acme.zulipchat.com:zulipBotKey")}` },
      form: { type: "stream", to: "ops", topic: MESSAGE.title, content: MD },
    },
  },
  {
    name: "google chat",
    url: "gchat://AAAAspace/gchatKey1/gchatToken1",
    expect: {
      path: "/chat.googleapis.com/v1/spaces/AAAAspace/messages?key=gchatKey1&token=gchatToken1",
      json: { text: `*${MESSAGE.title}*\n${MD}` },
    },
  },
  {
    name: "webex",
    url: "wxteams://webexHookToken1",
    expect: {
      path: "/api.ciscospark.com/v1/webhooks/incoming/webexHookToken1",
      json: { markdown: `**${MESSAGE.title}**\n${MD}` },
    },
  },
  {
    name: "flock",
    url: "flock://flockHookToken1",
    expect: {
      path: "/api.flock.com/hooks/sendMessage/flockHookToken1",
      json: { flockml: `<flockml><b>${MESSAGE.title}</b><br/><p><strong>92%</strong> used on db-1</p></flockml>` },
    },
  },
  {
    name: "ryver",
    url: "ryver://alertbot@acmeorg/ryverHookToken1",
    expect: {
      path: "/acmeorg.ryver.com/application/webhook/ryverHookToken1",
      json: { body: `**${MESSAGE.title}**\r\n${MD}`, createSource: { displayName: "alertbot", avatar: null } },
    },
  },
  {
    name: "guilded",
    url: "guilded://guildedId1/guildedToken1",
    expect: {
      path: "/media.guilded.gg/webhooks/guildedId1/guildedToken1",
      json: { content: MD, embeds: [{ title: MESSAGE.title }] },
    },
  },
  {
    name: "revolt",
    url: "revolt://revoltBotToken1/01HCHANNEL",
    expect: {
      path: "/api.revolt.chat/channels/01HCHANNEL/messages",
      headers: { "x-bot-token": "revoltBotToken1" },
      json: { content: `${MESSAGE.title}\n${MD}` },
    },
  },
  {
    name: "lark",
    url: "lark://larkHookToken1",
    expect: {
      path: "/open.larksuite.com/open-apis/bot/v2/hook/larkHookToken1",
      json: { msg_type: "text", content: { text: TITLED } },
    },
  },
  {
    name: "feishu",
    url: "feishu://feishuHookToken1",
    expect: {
      path: "/open.feishu.cn/open-apis/bot/v2/hook/feishuHookToken1/",
      json: { msg_type: "text", content: { text: TITLED } },
    },
  },
  {
    name: "dingtalk",
    url: "dingtalk://dingAccessToken1/13800000000",
    expect: {
      path: "/oapi.dingtalk.com/robot/send?access_token=dingAccessToken1",
      json: {
        msgtype: "markdown",
        markdown: { title: MESSAGE.title, text: `## ${MESSAGE.title}\n${MD}` },
        at: { atMobiles: ["13800000000"], isAtAll: false },
      },
    },
  },
  {
    name: "wecom bot",
    url: "wecombot://wecomKey1",
    expect: {
      path: "/qyapi.weixin.qq.com/cgi-bin/webhook/send?key=wecomKey1",
      json: { msgtype: "markdown", markdown: { content: `# ${MESSAGE.title}\n${MD}` } },
    },
  },
  {
    name: "line",
    url: "line://lineAccessToken1/U1234567890abcdef",
    expect: {
      path: "/api.line.me/v2/bot/message/push",
      headers: { authorization: "Bearer lineAccessToken1" },
      json: { to: "U1234567890abcdef", messages: [{ type: "text", text: TITLED }] },
    },
  },
  {
    name: "misskey",
    url: "misskeys://misskeyToken1@misskey.example",
    expect: {
      path: "/misskey.example/api/notes/create",
      json: { i: "misskeyToken1", text: `${MESSAGE.title}\n${MD}`, visibility: "public" },
    },
  },
  {
    name: "mastodon",
    url: "mastodons://mastoToken1@mastodon.example/@alice",
    expect: {
      path: "/mastodon.example/api/v1/statuses",
      headers: { authorization: "Bearer mastoToken1" },
      json: { status: `@alice ${TITLED}`, visibility: "direct" },
    },
  },
  {
    name: "nextcloud talk",
    url: "nctalks://ncuser:ncTalkPw@cloud.example/room42",
    expect: {
      path: "/cloud.example/ocs/v2.php/apps/spreed/api/v1/chat/room42",
      headers: { authorization: `Basic ${btoa("ncuser:ncTalkPw")}`, "ocs-apirequest": "true" },
      json: { message: TITLED },
    },
  },
  {
    name: "synology chat",
    url: "synologys://nas.example:5001/synoToken1",
    expect: {
      path: "/nas.example:5001/webapi/entry.cgi?api=SYNO.Chat.External&method=incoming&version=2&token=synoToken1",
      form: { payload: JSON.stringify({ text: TITLED }) },
    },
  },
  {
    name: "signal",
    url: "signals://signal.example:8080/+15550100001/+15550100002",
    expect: {
      path: "/signal.example:8080/v2/send",
      json: { message: TITLED, number: "+15550100001", recipients: ["+15550100002"] },
    },
  },
  {
    name: "whatsapp",
    url: "whatsapp://waToken1@106540352242922/+1-555-010-0003",
    expect: {
      path: "/graph.facebook.com/v21.0/106540352242922/messages",
      headers: { authorization: "Bearer waToken1" },
      json: { messaging_product: "whatsapp", to: "15550100003", type: "text", text: { body: TITLED } },
    },
  },
  {
    name: "threema",
    url: "threema://*ABCDEFG@threemaSecret1/ECHOECHO",
    expect: {
      path: "/msgapi.threema.ch/send_simple",
      form: { from: "*ABCDEFG", to: "ECHOECHO", secret: "threemaSecret1", text: TITLED },
    },
  },
  {
    name: "notifiarr",
    url: "notifiarr://notifiarrKey1/123456789",
    expect: {
      path: "/notifiarr.com/api/v1/notification/apprise",
      headers: { "x-api-key": "notifiarrKey1" },
      json: { discord: { text: { title: MESSAGE.title, description: TEXT }, ids: { channel: 123456789 } } },
    },
  },
];

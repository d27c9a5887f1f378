/** Push services and home/devices. */
import { H, MESSAGE, P, TEXT, type Case } from "./common";

const MD = "**92%** used on db-1";
const TITLED = `${MESSAGE.title}\n${TEXT}`;
const HTML = "<p><strong>92%</strong> used on db-1</p>";

export const PUSH: Case[] = [
  {
    name: "ntfy (ntfy.sh)",
    url: "ntfy://zv-ntfy-topic",
    expect: {
      path: "/ntfy.sh/",
      find: '"topic":"zv-ntfy-topic"',
      json: {
        topic: "zv-ntfy-topic",
        title: MESSAGE.title,
        message: MD,
        markdown: true,
        priority: 4,
        tags: ["warning"],
      },
    },
  },
  {
    name: "ntfy (self-hosted, token)",
    url: "ntfys://ntfy.example.net/ntfy-own?token=tk_ntfysecret",
    expect: {
      path: "/ntfy.example.net/",
      find: '"topic":"ntfy-own"',
      headers: { authorization: "Bearer tk_ntfysecret" },
      json: { topic: "ntfy-own" },
    },
  },
  {
    name: "gotify",
    url: `gotify://${H}/${P}/gotify/gotifysecret1`,
    expect: {
      path: "/self/gotify/message",
      headers: { "x-gotify-key": "gotifysecret1" },
      json: {
        title: MESSAGE.title,
        message: MD,
        priority: 8,
        extras: { "client::display": { contentType: "text/markdown" } },
      },
    },
  },
  {
    name: "pushover",
    url: "pover://uQiRzpo4DXghDmr9QzzfQu27cmVRsG@azGDORePK8gMaC0QOYAMyEEuzJnyUi",
    expect: {
      path: "/api.pushover.net/1/messages.json",
      find: "azGDORePK8gMaC0QOYAMyEEuzJnyUi",
      form: {
        token: "azGDORePK8gMaC0QOYAMyEEuzJnyUi",
        user: "uQiRzpo4DXghDmr9QzzfQu27cmVRsG",
        title: MESSAGE.title,
        message: HTML,
        html: "1",
        priority: "1",
      },
    },
  },
  {
    name: "pushbullet",
    url: "pbul://pbToken1",
    expect: {
      path: "/api.pushbullet.com/v2/pushes",
      headers: { "access-token": "pbToken1" },
      json: { type: "note", title: MESSAGE.title, body: TEXT },
    },
  },
  {
    name: "pushsafer",
    url: "psafers://psKey1",
    expect: { path: "/www.pushsafer.com/api", form: { k: "psKey1", d: "a", t: MESSAGE.title, m: TEXT, pr: "1" } },
  },
  {
    name: "prowl",
    url: "prowl://prowlKey1",
    expect: {
      path: "/api.prowlapp.com/publicapi/add",
      form: { apikey: "prowlKey1", application: "Zeitvault", event: MESSAGE.title, description: TEXT, priority: "1" },
    },
  },
  {
    name: "join",
    url: "join://joinKey1/group.android",
    expect: {
      method: "GET",
      path:
        "/joinjoaomgcd.appspot.com/_ah/api/messaging/v1/sendPush?apikey=joinKey1&deviceId=group.android&title" +
        "=Disk+almost+full&text=92%25+used+on+db-1",
    },
  },
  {
    name: "simplepush",
    url: "spush://spKey1",
    expect: { path: "/api.simplepush.io/send", form: { key: "spKey1", title: MESSAGE.title, msg: TEXT } },
  },
  {
    name: "pushme",
    url: "pushme://pmKey1",
    expect: {
      path: "/push.i-i.me/",
      form: { push_key: "pmKey1", title: MESSAGE.title, content: MD, type: "markdown" },
    },
  },
  {
    name: "bark",
    url: "barks://bark.example/barkDevice1",
    expect: {
      path: "/bark.example/push",
      json: { device_key: "barkDevice1", title: MESSAGE.title, body: TEXT, level: "timeSensitive" },
    },
  },
  {
    name: "pushdeer",
    url: "pushdeer://pdKey1",
    expect: {
      path: "/api2.pushdeer.com/message/push",
      form: { pushkey: "pdKey1", text: MESSAGE.title, desp: MD, type: "markdown" },
    },
  },
  {
    name: "serverchan",
    url: "schan://SCT123key",
    expect: { path: "/sctapi.ftqq.com/SCT123key.send", form: { title: MESSAGE.title, desp: MD } },
  },
  {
    name: "pushplus",
    url: "pushplus://ppToken1",
    expect: {
      path: "/www.pushplus.plus/send",
      json: { token: "ppToken1", title: MESSAGE.title, content: MD, template: "markdown" },
    },
  },
  {
    name: "wxpusher",
    url: "wxpusher://AT_wxToken1/UID_abc/123",
    expect: {
      path: "/wxpusher.zjiecode.com/api/send/message",
      json: {
        appToken: "AT_wxToken1",
        content: MD,
        summary: MESSAGE.title,
        contentType: 3,
        topicIds: [123],
        uids: ["UID_abc"],
      },
    },
  },
  {
    name: "onesignal",
    url: "onesignal://app-uuid-1@osKey1/#Subscribed",
    expect: {
      path: "/api.onesignal.com/notifications",
      headers: { authorization: "Key osKey1" },
      json: {
        app_id: "app-uuid-1",
        contents: { en: TEXT },
        headings: { en: MESSAGE.title },
        priority: 8,
        included_segments: ["Subscribed"],
      },
    },
  },
  {
    name: "techulus push",
    url: "push://techKey1",
    expect: {
      path: "/push.techulus.com/api/v1/notify",
      headers: { "x-api-key": "techKey1" },
      json: { title: MESSAGE.title, body: TEXT },
    },
  },
  {
    name: "lametric (cloud)",
    url: "lametric://lmToken1@lmApp1",
    expect: {
      path: "/developer.lametric.com/api/v1/dev/widget/update/com.lametric.lmApp1/1",
      headers: { "x-access-token": "lmToken1" },
      json: { frames: [{ icon: "i9182", text: `${MESSAGE.title} ${TEXT}`, index: 0 }] },
    },
  },
  {
    name: "parse platform",
    url: "parseps://parseApp1:parseMaster1@parse.example",
    expect: {
      path: "/parse.example/parse/push",
      headers: { "x-parse-application-id": "parseApp1", "x-parse-master-key": "parseMaster1" },
      json: { where: { deviceType: { $in: ["ios", "android"] } }, data: { title: MESSAGE.title, alert: TEXT } },
    },
  },
  {
    name: "pushy",
    url: "pushy://pushyKey1/#alerts",
    expect: {
      path: "/api.pushy.me/push?api_key=pushyKey1",
      json: { to: "/topics/alerts", data: { message: TEXT }, notification: { body: TEXT, title: MESSAGE.title } },
    },
  },
  {
    name: "kumulos",
    url: "kumulos://kmApiKey1/kmServerKey1",
    expect: {
      path: "/messages.kumulos.com/v2/notifications",
      headers: { authorization: `Basic ${btoa("kmApiKey1:kmServerKey1")}` },
      json: { target: { broadcast: true }, content: { title: MESSAGE.title, message: TEXT } },
    },
  },
  {
    name: "chanify",
    url: "chantify://chToken1",
    expect: { path: "/api.chanify.net/v1/sender/chToken1/", form: { text: TITLED } },
  },
  { name: "notica", url: "notica://noticaTok1", expect: { path: "/notica.us/?noticaTok1", form: { d: TITLED } } },
  {
    name: "pushcut",
    url: "pushcut://pcKey1/Alert",
    expect: {
      path: "/api.pushcut.io/v1/notifications/Alert",
      headers: { "api-key": "pcKey1" },
      json: { title: MESSAGE.title, text: TEXT },
    },
  },
  {
    name: "home assistant",
    url: "hassios://ha.example/haToken1/notify.mobile_app_phone",
    expect: {
      path: "/ha.example/api/services/notify/mobile_app_phone",
      headers: { authorization: "Bearer haToken1" },
      json: { title: MESSAGE.title, message: MD },
    },
  },
  {
    name: "enigma2",
    url: "enigma2s://root:e2pw@e2.example",
    expect: {
      method: "GET",
      path: "/e2.example/api/message?text=Disk+almost+full%0A92%25+used+on+db-1&type=2&timeout=13",
      headers: { authorization: `Basic ${btoa("root:e2pw")}` },
    },
  },
  {
    name: "nextcloud",
    url: "nclouds://ncadmin:ncPw@cloud.example/bob",
    expect: {
      path: "/cloud.example/ocs/v2.php/apps/admin_notifications/api/v1/notifications/bob",
      headers: { authorization: `Basic ${btoa("ncadmin:ncPw")}`, "ocs-apirequest": "true" },
      form: { shortMessage: MESSAGE.title, longMessage: TEXT },
    },
  },
];

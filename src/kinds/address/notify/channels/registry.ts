/**
 * Every channel notify can send through, one module each (./services): adding a channel is its
 * file and its line here. Schemes are unique across the list (checked when the module loads).
 */
import type { Channel } from "./channel";
import africastalking from "./services/africastalking";
import appriseapi from "./services/appriseapi";
import bark from "./services/bark";
import brevo from "./services/brevo";
import bulksms from "./services/bulksms";
import bulkvs from "./services/bulkvs";
import burstsms from "./services/burstsms";
import chanify from "./services/chanify";
import clickatell from "./services/clickatell";
import clicksend from "./services/clicksend";
import d7sms from "./services/d7sms";
import dingtalk from "./services/dingtalk";
import discord from "./services/discord";
import elasticemail from "./services/elasticemail";
import enigma2 from "./services/enigma2";
import feishu from "./services/feishu";
import flock from "./services/flock";
import formHook from "./services/form";
import freemobile from "./services/freemobile";
import googlechat from "./services/googlechat";
import gotify from "./services/gotify";
import guilded from "./services/guilded";
import homeassistant from "./services/homeassistant";
import httpsms from "./services/httpsms";
import ifttt from "./services/ifttt";
import incidentio from "./services/incidentio";
import infobip from "./services/infobip";
import join from "./services/join";
import jsonHook from "./services/json";
import kavenegar from "./services/kavenegar";
import kumulos from "./services/kumulos";
import lametric from "./services/lametric";
import lark from "./services/lark";
import line from "./services/line";
import mailchannels from "./services/mailchannels";
import mailersend from "./services/mailersend";
import mailgun from "./services/mailgun";
import mailjet from "./services/mailjet";
import mailto from "./services/mailto";
import mailtrap from "./services/mailtrap";
import mastodon from "./services/mastodon";
import mattermost from "./services/mattermost";
import messagebird from "./services/messagebird";
import misskey from "./services/misskey";
import nextcloud from "./services/nextcloud";
import nextcloudtalk from "./services/nextcloudtalk";
import notica from "./services/notica";
import notifiarr from "./services/notifiarr";
import ntfy from "./services/ntfy";
import onesignal from "./services/onesignal";
import opsgenie from "./services/opsgenie";
import pagerduty from "./services/pagerduty";
import pagertree from "./services/pagertree";
import parsePlatform from "./services/parse";
import plivo from "./services/plivo";
import postmark from "./services/postmark";
import prowl from "./services/prowl";
import pushbullet from "./services/pushbullet";
import pushcut from "./services/pushcut";
import pushdeer from "./services/pushdeer";
import pushme from "./services/pushme";
import pushover from "./services/pushover";
import pushplus from "./services/pushplus";
import pushsafer from "./services/pushsafer";
import pushy from "./services/pushy";
import resend from "./services/resend";
import revolt from "./services/revolt";
import rocketchat from "./services/rocketchat";
import ryver from "./services/ryver";
import sendgrid from "./services/sendgrid";
import serverchan from "./services/serverchan";
import ses from "./services/ses";
import seven from "./services/seven";
import signal from "./services/signal";
import signl4 from "./services/signl4";
import simplepush from "./services/simplepush";
import sinch from "./services/sinch";
import slack from "./services/slack";
import smsmanager from "./services/smsmanager";
import smtp2go from "./services/smtp2go";
import sns from "./services/sns";
import sparkpost from "./services/sparkpost";
import spike from "./services/spike";
import splunk from "./services/splunk";
import squadcast from "./services/squadcast";
import synology from "./services/synology";
import techulus from "./services/techulus";
import telegram from "./services/telegram";
import telnyx from "./services/telnyx";
import textbelt from "./services/textbelt";
import threema from "./services/threema";
import twilio from "./services/twilio";
import vonage from "./services/vonage";
import webex from "./services/webex";
import wecombot from "./services/wecombot";
import whatsapp from "./services/whatsapp";
import workflows from "./services/workflows";
import wxpusher from "./services/wxpusher";
import xmlHook from "./services/xml";
import zenduty from "./services/zenduty";
import zeptomail from "./services/zeptomail";
import zulip from "./services/zulip";

export const CHANNELS: Channel[] = [
  // webhook
  appriseapi,
  formHook,
  ifttt,
  jsonHook,
  xmlHook,
  // chat
  dingtalk,
  discord,
  feishu,
  flock,
  googlechat,
  guilded,
  lark,
  line,
  mastodon,
  mattermost,
  misskey,
  nextcloudtalk,
  notifiarr,
  revolt,
  rocketchat,
  ryver,
  signal,
  slack,
  synology,
  telegram,
  threema,
  webex,
  wecombot,
  whatsapp,
  workflows,
  zulip,
  // push
  bark,
  chanify,
  gotify,
  join,
  kumulos,
  notica,
  ntfy,
  onesignal,
  parsePlatform,
  prowl,
  pushbullet,
  pushcut,
  pushdeer,
  pushme,
  pushover,
  pushplus,
  pushsafer,
  pushy,
  serverchan,
  simplepush,
  techulus,
  wxpusher,
  // home
  enigma2,
  homeassistant,
  lametric,
  nextcloud,
  // incident
  incidentio,
  opsgenie,
  pagerduty,
  pagertree,
  signl4,
  spike,
  splunk,
  squadcast,
  zenduty,
  // sms
  africastalking,
  bulksms,
  bulkvs,
  burstsms,
  clickatell,
  clicksend,
  d7sms,
  freemobile,
  httpsms,
  infobip,
  kavenegar,
  messagebird,
  plivo,
  seven,
  sinch,
  smsmanager,
  sns,
  telnyx,
  textbelt,
  twilio,
  vonage,
  // email
  brevo,
  elasticemail,
  mailchannels,
  mailersend,
  mailgun,
  mailjet,
  mailto,
  mailtrap,
  postmark,
  resend,
  sendgrid,
  ses,
  smtp2go,
  sparkpost,
  zeptomail,
];

const BY_SCHEME = new Map<string, Channel>();
for (const c of CHANNELS) {
  for (const s of c.schemes) {
    if (BY_SCHEME.has(s)) throw new Error(`notify: scheme ${s} is claimed twice`);
    BY_SCHEME.set(s, c);
  }
}

export const channelFor = (scheme: string): Channel | undefined => BY_SCHEME.get(scheme);

/** SMS gateways: the text is title and body on two lines. */
import { MESSAGE, TEXT, type Case } from "./common";

const SMS = `${MESSAGE.title}\n${TEXT}`;
const Q = "Disk+almost+full%0A92%25+used+on+db-1";
const basic = (u: string, p: string) => `Basic ${btoa(`${u}:${p}`)}`;

export const SMS_CASES: Case[] = [
  {
    name: "twilio",
    url: "twilio://AC123:twilioTok1@+15550100010/+15550100011",
    expect: {
      path: "/api.twilio.com/2010-04-01/Accounts/AC123/Messages.json",
      headers: { authorization: basic("AC123", "twilioTok1") },
      form: { To: "+15550100011", From: "+15550100010", Body: SMS },
    },
  },
  {
    name: "vonage",
    url: "vonage://vgKey1:vgSecret1@15550100020/15550100021",
    expect: {
      path: "/rest.nexmo.com/sms/json",
      form: { api_key: "vgKey1", api_secret: "vgSecret1", from: "15550100020", to: "15550100021", text: SMS },
    },
  },
  {
    name: "sinch",
    url: "sinch://spi1:sinchTok1@15550100030/+15550100031",
    expect: {
      path: "/us.sms.api.sinch.com/xms/v1/spi1/batches",
      headers: { authorization: "Bearer sinchTok1" },
      json: { from: "15550100030", to: ["+15550100031"], body: SMS },
    },
  },
  {
    name: "messagebird",
    url: "msgbird://mbKey1/15550100040/15550100041",
    expect: {
      path: "/rest.messagebird.com/messages",
      headers: { authorization: "AccessKey mbKey1" },
      json: { originator: "15550100040", recipients: ["15550100041"], body: SMS },
    },
  },
  {
    name: "plivo",
    url: "plivo://MAID1@plivoTok1/15550100050/15550100051",
    expect: {
      path: "/api.plivo.com/v1/Account/MAID1/Message/",
      headers: { authorization: basic("MAID1", "plivoTok1") },
      json: { src: "15550100050", dst: "15550100051", text: SMS },
    },
  },
  {
    name: "bulksms",
    url: "bulksms://bsId1:bsSecret1@+15550100060",
    expect: {
      path: "/api.bulksms.com/v1/messages",
      headers: { authorization: basic("bsId1", "bsSecret1") },
      json: [{ to: "+15550100060", body: SMS, routingGroup: "STANDARD" }],
    },
  },
  {
    name: "bulkvs",
    url: "bulkvs://bvUser:bvPw@15550100070/15550100071",
    expect: {
      path: "/portal.bulkvs.com/api/v1.0/messageSend",
      headers: { authorization: basic("bvUser", "bvPw") },
      json: { From: "15550100070", To: ["15550100071"], Message: SMS },
    },
  },
  {
    name: "clicksend",
    url: "clicksend://csUser:csKey1@+15550100080",
    expect: {
      path: "/rest.clicksend.com/v3/sms/send",
      headers: { authorization: basic("csUser", "csKey1") },
      json: { messages: [{ source: "zeitvault", body: SMS, to: "+15550100080" }] },
    },
  },
  {
    name: "d7 networks",
    url: "d7sms://d7Token1@+15550100090",
    expect: {
      path: "/api.d7networks.com/messages/v1/send",
      headers: { authorization: "Bearer d7Token1" },
      json: {
        messages: [
          { channel: "sms", recipients: ["15550100090"], content: SMS, msg_type: "text", data_coding: "text" },
        ],
        message_globals: { originator: "SMSInfo" },
      },
    },
  },
  {
    name: "kavenegar",
    url: "kavenegar://kvKey1/09120000000",
    expect: { path: "/api.kavenegar.com/v1/kvKey1/sms/send.json", form: { receptor: "09120000000", message: SMS } },
  },
  {
    name: "httpsms",
    url: "httpsms://hsKey1@+15550100100/+15550100101",
    expect: {
      path: "/api.httpsms.com/v1/messages/send",
      headers: { "x-api-key": "hsKey1" },
      json: { from: "+15550100100", to: "+15550100101", content: SMS },
    },
  },
  {
    name: "seven",
    url: "seven://sevenKey1/+15550100110",
    expect: {
      path: "/gateway.seven.io/api/sms",
      headers: { "x-api-key": "sevenKey1" },
      json: { to: "+15550100110", text: SMS },
    },
  },
  {
    name: "sms manager",
    url: "smsmgr://smKey1@420777000000",
    expect: {
      method: "GET",
      path: `/http-api.smsmanager.cz/Send?apikey=smKey1&number=420777000000&message=${Q}&gateway=high`,
    },
  },
  {
    name: "burst sms",
    url: "burstsms://bsKey:bsSec@ZVAlert/61400000000",
    expect: {
      path: "/api.transmitsms.com/send-sms.json",
      headers: { authorization: basic("bsKey", "bsSec") },
      form: { message: SMS, to: "61400000000", from: "ZVAlert", countrycode: "AU" },
    },
  },
  {
    name: "free mobile",
    url: "freemobile://12345678@fmKey1",
    expect: { path: "/smsapi.free-mobile.fr/sendmsg", json: { user: "12345678", pass: "fmKey1", msg: SMS } },
  },
  {
    name: "clickatell",
    url: "clickatell://ctKey1/15550100120",
    expect: {
      method: "GET",
      path: `/platform.clickatell.com/messages/http/send?apiKey=ctKey1&to=15550100120&content=${Q}`,
    },
  },
  {
    name: "africa's talking",
    url: "atalk://sandboxuser@atKey1/+254700000001",
    expect: {
      path: "/api.africastalking.com/version1/messaging",
      headers: { apikey: "atKey1" },
      form: { username: "sandboxuser", to: "+254700000001", message: SMS },
    },
  },
  {
    name: "telnyx",
    url: "telnyx://tnKey1@+15550100130/+15550100131",
    expect: {
      path: "/api.telnyx.com/v2/messages",
      headers: { authorization: "Bearer tnKey1" },
      json: { from: "+15550100130", to: "+15550100131", text: SMS },
    },
  },
  {
    name: "textbelt",
    url: "textbelt://tbKey1@+15550100140",
    expect: { path: "/textbelt.com/text", form: { phone: "+15550100140", message: SMS, key: "tbKey1" } },
  },
  {
    name: "infobip",
    url: "infobip://ibKey1@xyz.api.infobip.com/+15550100150?from=ZV",
    expect: {
      path: "/xyz.api.infobip.com/sms/3/messages",
      headers: { authorization: "App ibKey1" },
      json: { messages: [{ destinations: [{ to: "15550100150" }], sender: "ZV", content: { text: SMS } }] },
    },
  },
  {
    name: "amazon sns",
    url: "sns://AKIAEXAMPLE/snsSecret1/us-east-1/+15550100160",
    expect: {
      path: "/sns.us-east-1.amazonaws.com/",
      headers: {
        authorization: new RegExp(
          /^AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE\/\d{8}\/us-east-1\/sns\/aws4_request, /.source +
            /SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/.source,
        ),
        "x-amz-date": /^\d{8}T\d{6}Z$/,
      },
      form: { Action: "Publish", Version: "2010-03-31", PhoneNumber: "+15550100160", Message: SMS },
    },
  },
];

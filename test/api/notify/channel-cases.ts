/**
 * One case per channel (cases/*.ts, by category): a URL in its grammar and the request its
 * provider's documentation specifies for the test message (cases/common.ts).
 */
import type { Case } from "./cases/common";
import { CHAT } from "./cases/chat";
import { EMAIL } from "./cases/email";
import { INCIDENT } from "./cases/incident";
import { PUSH } from "./cases/push";
import { SMS_CASES as SMS } from "./cases/sms";
import { WEBHOOK } from "./cases/webhook";

export const CASES: Case[] = [...WEBHOOK, ...CHAT, ...PUSH, ...INCIDENT, ...SMS, ...EMAIL];
export { MESSAGE, type Expected } from "./cases/common";

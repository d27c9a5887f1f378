/**
 * Requests whose target itself is a secret: a notify channel's token sits in the URL's path
 * (Telegram, Slack webhooks) or in a header (an API key), so the URL and the headers are as
 * secret as a released payload's body. Such a request is kept in the delivery log and travels
 * on the queue as one sealed value (auth/sealing.ts); the log shows a redacted URL in its place.
 * The consumer opens it just before the attempt, which is also when anything time-bound is done:
 * an AWS Signature V4 is valid for minutes, so it is made per attempt, never stored.
 */
import { AwsV4Signer } from "aws4fetch";
import { sealing } from "../auth/sealing-loader";
import type { Env } from "../env";

/**
 * How a provider that answers 2xx for a refused message says so in its body: the JSON value at
 * `field` (dot path) must equal `equals` (Slack's API `ok: true`, Pushover's `status: 1`).
 */
export interface AnswerCheck {
  field: string;
  equals: string | number | boolean;
}

/** Credentials for AWS Signature V4 (SES, SNS), applied to each attempt. */
export interface AwsSigning {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  service: string;
}

/** What a kind adds to an OutgoingRequest whose URL and headers are secret. */
export interface SecretTarget {
  /** The URL as the log shows it, credentials masked. */
  shownUrl: string;
  okWhen?: AnswerCheck;
  aws?: AwsSigning;
}

/** The request as it is sealed: everything needed to make the attempt. */
export interface OpenedRequest {
  url: string;
  headers: Record<string, string>;
  body: string | null;
  okWhen?: AnswerCheck;
  aws?: AwsSigning;
}

/** Sealing is loaded by then (auth/sealing-loader.ts): by the resource object that stages the request. */
export function sealRequest(env: Env, request: OpenedRequest): string {
  return sealing().seal(env, JSON.stringify(request));
}

/** Sealing is loaded by then: by the attempt that opens it. */
export function openRequest(env: Env, sealed: string): OpenedRequest {
  return JSON.parse(sealing().unseal(env, sealed)) as OpenedRequest;
}

/** The headers an AWS service wants on this attempt (Authorization, X-Amz-Date, the body's hash). */
export async function awsHeaders(
  aws: AwsSigning,
  method: string,
  url: string,
  headers: Record<string, string>,
  body: string | null,
): Promise<Record<string, string>> {
  const signer = new AwsV4Signer({ ...aws, url, method, headers, body: body ?? undefined });
  const signed = await signer.sign();
  return Object.fromEntries(signed.headers.entries());
}

/** Null when the answer passes the check, else why it does not (for the attempt log). */
export function answerRefusal(check: AnswerCheck, text: string): string | null {
  let value: unknown;
  try {
    value = check.field
      .split(".")
      .reduce<unknown>(
        (v, k) => (v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
        JSON.parse(text),
      );
  } catch {
    return `the answer is not JSON (expected ${check.field} = ${JSON.stringify(check.equals)})`;
  }
  return value === check.equals
    ? null
    : `the provider refused it: ${check.field} is ${JSON.stringify(value) ?? "absent"}, not ` +
        `${JSON.stringify(check.equals)}`;
}

/**
 * The check a watch makes, in `check`: one of 13 types told apart by `check.type`, nine over HTTP
 * (http-check-schema.ts) and four that are not.
 */
import { z } from "@hono/zod-openapi";
import { httpUrl } from "../../../openapi/schemas";
import {
  contentChangeCheck,
  headerCheck,
  httpStatusCheck,
  jsonValueCheck,
  keywordCheck,
  numberThresholdCheck,
  redirectCheck,
  responseTimeCheck,
  rssCheck,
  type,
} from "./http-check-schema";

const comparison = z.enum(["==", "!=", "<", "<=", ">", ">="]);

export const DNS_TYPES = ["A", "AAAA", "CNAME", "MX", "NS", "TXT", "PTR"] as const;
const hostname = z
  .string()
  .min(1)
  .max(253)
  .regex(
    /^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9_-]{1,63}(?<!-))*\.?$/,
    "must be a DNS name (letters, digits, hyphens; IDNs in their xn-- form)",
  )
  .openapi("DnsName");

export const dnsRecordCheck = z
  .object({
    type: type("dns_record"),
    name: hostname,
    record_type: z.enum(DNS_TYPES).default("A"),
    expected: z
      .array(z.string().min(1).max(1000))
      .max(50)
      .default([])
      .describe(
        "Expected values (`10 mx.example.com` for MX); empty: up while any record answers. A change sends " +
          "watch.changed.",
      ),
    match: z
      .enum(["exact", "contains"])
      .default("exact")
      .describe("`exact`: the answer is exactly the expected set; `contains`: it includes every expected value."),
    resolver_url: httpUrl.default("https://cloudflare-dns.com/dns-query").describe("A DNS-over-HTTPS resolver."),
    format: z
      .enum(["json", "wire"])
      .default("json")
      .describe("`json`: application/dns-json (Cloudflare, Google); `wire`: RFC 8484 application/dns-message."),
  })
  .strict();

export const heartbeatCheck = z
  .object({
    type: type("heartbeat"),
    grace_seconds: z
      .int()
      .min(0)
      .max(86400)
      .default(60)
      .describe("How late a ping may be: up while one arrived within the last interval_seconds + grace_seconds."),
  })
  .strict()
  .describe(
    "Inbound pings at the resource's public address (GET or POST `/p/{public_id}`; `/fail` reports a failure).",
  );

export const domainExpiryCheck = z
  .object({
    type: type("domain_expiry"),
    domain: hostname,
    days_before: z
      .int()
      .min(1)
      .max(365)
      .default(30)
      .describe("Down when the registration expires within this many days."),
    rdap_url: httpUrl
      .default("https://rdap.org")
      .describe("The RDAP service; the check reads `{rdap_url}/domain/{domain}` and its `expiration` event."),
  })
  .strict();

const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte address")
  .openapi("EvmAddress");
export const chainBalanceCheck = z
  .object({
    type: type("chain_balance"),
    rpc_url: httpUrl.describe("An EVM JSON-RPC endpoint."),
    address: evmAddress,
    token: evmAddress
      .nullable()
      .default(null)
      .describe("An ERC-20 contract (its balanceOf); null for the chain's own coin (eth_getBalance)."),
    operator: comparison.describe("Up while `balance {operator} threshold` holds."),
    threshold: z
      .string()
      .regex(/^\d{1,78}$/, "must be a whole number of base units (wei), as a decimal string")
      .describe("In base units (wei, or the token's smallest unit)."),
  })
  .strict();

export const check = z.discriminatedUnion("type", [
  httpStatusCheck,
  keywordCheck,
  contentChangeCheck,
  jsonValueCheck,
  responseTimeCheck,
  headerCheck,
  redirectCheck,
  dnsRecordCheck,
  rssCheck,
  heartbeatCheck,
  domainExpiryCheck,
  chainBalanceCheck,
  numberThresholdCheck,
]);
export type Check = z.infer<typeof check>;
export type CheckType = Check["type"];
export type HttpCheck = Extract<Check, { url: string; method: string }>;

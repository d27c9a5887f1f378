/**
 * x402 payment terms (PaymentRequirements) for one call, in both protocol
 * versions: the v1 body (`accepts`) and the v2 `PAYMENT-REQUIRED` header.
 * Network, asset, EIP-712 domain and payTo all come from configuration.
 */
import { fromBase64, toBase64 } from "../../bytes";
import type { Env } from "../../env";
import { AppError } from "../../http/errors";
import type { ErrorCode } from "../../http/error-codes";
import { microToUsd } from "../amounts";

export interface ChainConfig {
  /** v1 network name, e.g. "base-sepolia". */
  network: string;
  /** v2 network id (CAIP-2), e.g. "eip155:84532". */
  caip2: string;
  chainId: number;
  asset: `0x${string}`;
  assetName: string;
  assetVersion: string;
  payTo: `0x${string}`;
  maxTimeoutSeconds: number;
}

export function chainConfig(env: Env): ChainConfig {
  const chainId = Number(env.X402_CHAIN_ID);
  return {
    network: env.X402_NETWORK,
    caip2: `eip155:${chainId}`,
    chainId,
    asset: env.X402_ASSET as `0x${string}`,
    assetName: env.X402_ASSET_NAME,
    assetVersion: env.X402_ASSET_VERSION,
    payTo: env.X402_PAY_TO as `0x${string}`,
    maxTimeoutSeconds: Number(env.X402_MAX_TIMEOUT_SECONDS),
  };
}

export interface PaymentTerms {
  priceMicro: number;
  resourceUrl: string;
  description: string;
  chain: ChainConfig;
}

export function requirementsV1(t: PaymentTerms) {
  return {
    scheme: "exact",
    network: t.chain.network,
    maxAmountRequired: String(t.priceMicro),
    resource: t.resourceUrl,
    description: t.description,
    mimeType: "application/json",
    payTo: t.chain.payTo,
    maxTimeoutSeconds: t.chain.maxTimeoutSeconds,
    asset: t.chain.asset,
    extra: { name: t.chain.assetName, version: t.chain.assetVersion },
  };
}

export function requirementsV2(t: PaymentTerms) {
  return {
    scheme: "exact",
    network: t.chain.caip2,
    amount: String(t.priceMicro),
    asset: t.chain.asset,
    payTo: t.chain.payTo,
    maxTimeoutSeconds: t.chain.maxTimeoutSeconds,
    extra: { name: t.chain.assetName, version: t.chain.assetVersion },
  };
}

/** Reads a base64 JSON header (x402 payment payloads and answers); throws on anything else. */
export function decodeHeader(value: string): unknown {
  return JSON.parse(new TextDecoder().decode(fromBase64(value.trim())));
}

export function encodeHeader(value: unknown): string {
  return toBase64(new TextEncoder().encode(JSON.stringify(value)));
}

/**
 * A 402 carrying the terms of this call: the v1 body members and the v2 header.
 * `code` says why (no payment, low balance, cap reached, invalid payment).
 */
export function paymentError(code: ErrorCode, detail: string, terms: PaymentTerms): AppError {
  const v2 = {
    x402Version: 2,
    error: detail,
    resource: { url: terms.resourceUrl, description: terms.description, mimeType: "application/json" },
    accepts: [requirementsV2(terms)],
  };
  return new AppError(code, detail, {
    extra: { x402Version: 1, error: detail, accepts: [requirementsV1(terms)], price_usd: microToUsd(terms.priceMicro) },
    headers: { "PAYMENT-REQUIRED": encodeHeader(v2) },
  });
}

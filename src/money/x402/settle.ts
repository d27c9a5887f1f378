/**
 * Settlement of a verified x402 payment, by mode (`X402_SETTLEMENT`):
 * - `facilitator`: POST /verify before the work and /settle after it, to FACILITATOR_URL;
 * - `direct`: the service itself submits transferWithAuthorization through RPC_URL
 *   from a relayer key, after simulating it before the work;
 * - `none`: development only, nothing moves on chain; refused in production.
 * `precheck` runs before the paid work so an unfunded or used authorization is
 * refused with nothing done; `settle` runs after it.
 */
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  parseSignature,
  type Hex,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { isDevelopment, type Env } from "../../env";
import { AppError } from "../../http/errors";
import { requirementsV1, requirementsV2, type PaymentTerms } from "./terms";
import type { VerifiedPayment } from "./verify";

export interface Settlement {
  success: true;
  transaction: string;
  network: string;
  payer: string;
}

export interface Settler {
  precheck(payment: VerifiedPayment, terms: PaymentTerms): Promise<void>;
  settle(payment: VerifiedPayment, terms: PaymentTerms): Promise<Settlement>;
}

const SETTLE_TIMEOUT_MS = 30_000;

const transferWithAuthorizationAbi = [
  {
    type: "function",
    name: "transferWithAuthorization",
    stateMutability: "nonpayable",
    inputs: [
      { name: "from", type: "address" },
      { name: "to", type: "address" },
      { name: "value", type: "uint256" },
      { name: "validAfter", type: "uint256" },
      { name: "validBefore", type: "uint256" },
      { name: "nonce", type: "bytes32" },
      { name: "v", type: "uint8" },
      { name: "r", type: "bytes32" },
      { name: "s", type: "bytes32" },
    ],
    outputs: [],
  },
] as const;

export function settlerFor(env: Env): Settler {
  switch (env.X402_SETTLEMENT) {
    case "none":
      if (!isDevelopment(env))
        throw new Error("X402_SETTLEMENT=none is refused unless ENVIRONMENT is development or test");
      return noSettlement;
    case "direct":
      return directSettler(env);
    case "facilitator":
      return facilitatorSettler(env);
    default:
      throw new Error(`Unknown X402_SETTLEMENT "${env.X402_SETTLEMENT}"`);
  }
}

const networkOf = (p: VerifiedPayment, t: PaymentTerms) => (p.version === 1 ? t.chain.network : t.chain.caip2);

const noSettlement: Settler = {
  async precheck() {},
  async settle(payment, terms) {
    return { success: true, transaction: "", network: networkOf(payment, terms), payer: payment.payer };
  },
};

function directSettler(env: Env): Settler {
  if (!env.RPC_URL || !env.RELAYER_PRIVATE_KEY)
    throw new Error("X402_SETTLEMENT=direct needs RPC_URL and RELAYER_PRIVATE_KEY");
  const chain = defineChain({
    id: Number(env.X402_CHAIN_ID),
    name: env.X402_NETWORK,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [env.RPC_URL] } },
  });
  const account = privateKeyToAccount(env.RELAYER_PRIVATE_KEY as Hex);
  // One retry only: a revert is not transient, and a slow 402 helps nobody.
  const transport = http(env.RPC_URL, { timeout: SETTLE_TIMEOUT_MS, retryCount: 1 });
  const reader = createPublicClient({ chain, transport });
  const writer = createWalletClient({ chain, transport, account });

  const call = (p: VerifiedPayment, t: PaymentTerms) => {
    const { v, r, s, yParity } = parseSignature(p.signature);
    return {
      address: t.chain.asset,
      abi: transferWithAuthorizationAbi,
      functionName: "transferWithAuthorization" as const,
      args: [
        p.payer,
        t.chain.payTo,
        p.value,
        p.validAfter,
        p.validBefore,
        p.nonce,
        Number(v ?? BigInt(yParity + 27)),
        r,
        s,
      ] as const,
      account,
    };
  };

  return {
    async precheck(payment, terms) {
      try {
        // "pending": the transfer lands in the next block, whose timestamp is what validAfter/validBefore meet.
        await reader.simulateContract({ ...call(payment, terms), blockTag: "pending" });
      } catch (err) {
        throw new AppError("payment_invalid", `The transfer would fail on chain: ${revertReason(err)}.`);
      }
    },
    async settle(payment, terms) {
      let hash: Hex;
      try {
        hash = await writer.writeContract(call(payment, terms));
      } catch (err) {
        throw new AppError("payment_invalid", `The transfer was refused on chain: ${revertReason(err)}.`);
      }
      try {
        const receipt = await reader.waitForTransactionReceipt({ hash, timeout: SETTLE_TIMEOUT_MS });
        if (receipt.status !== "success") throw new AppError("payment_invalid", `The transfer ${hash} reverted.`);
      } catch (err) {
        if (err instanceof AppError) throw err;
        // The transaction may still land: keep its hash, never ask the client to pay again.
        throw new AppError("settlement_failed", `Settlement of ${hash} did not confirm in time.`, {
          extra: { transaction: hash },
        });
      }
      return { success: true, transaction: hash, network: networkOf(payment, terms), payer: payment.payer };
    },
  };
}

/** The token's own revert reason when there is one (e.g. "authorization is used"), else viem's short message. */
function revertReason(err: unknown): string {
  if (err instanceof BaseError) {
    const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError && reverted.reason) return reverted.reason;
    return err.shortMessage.split("\n")[0] ?? "unknown error";
  }
  return err instanceof Error ? err.message : "unknown error";
}

function facilitatorSettler(env: Env): Settler {
  const post = async (path: string, payment: VerifiedPayment, terms: PaymentTerms) => {
    const body = {
      x402Version: payment.version,
      paymentPayload: payment.raw,
      paymentRequirements: payment.version === 1 ? requirementsV1(terms) : requirementsV2(terms),
    };
    let res: Response;
    try {
      res = await fetch(new URL(path, env.FACILITATOR_URL.replace(/\/?$/, "/")), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(SETTLE_TIMEOUT_MS),
      });
    } catch {
      throw new AppError("settlement_failed", `The payment facilitator did not answer ${path}.`);
    }
    if (!res.ok)
      throw new AppError("settlement_failed", `The payment facilitator answered ${path} with ${res.status}.`);
    return (await res.json()) as Record<string, unknown>;
  };
  return {
    async precheck(payment, terms) {
      const answer = await post("verify", payment, terms);
      if (answer.isValid !== true)
        throw new AppError(
          "payment_invalid",
          `The facilitator refused the payment: ${String(answer.invalidReason ?? "invalid")}.`,
        );
    },
    async settle(payment, terms) {
      const answer = await post("settle", payment, terms);
      if (answer.success !== true)
        throw new AppError(
          "payment_invalid",
          `The facilitator could not settle: ${String(answer.errorReason ?? "failed")}.`,
        );
      return {
        success: true,
        transaction: String(answer.transaction ?? ""),
        network: networkOf(payment, terms),
        payer: payment.payer,
      };
    },
  };
}

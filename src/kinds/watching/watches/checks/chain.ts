/**
 * chain_balance: an EVM balance over JSON-RPC: `eth_getBalance` for the chain's own coin, or an
 * ERC-20's `balanceOf(address)` through `eth_call` (selector 0x70a08231, the address left-padded
 * to 32 bytes). Balances are whole numbers of base units, compared as big integers.
 */
import type { Check } from "../check-schema";
import { compare, failed, failure, passed, timedFetch, type CheckContext, type Outcome } from "./outcome";

type ChainCheck = Extract<Check, { type: "chain_balance" }>;
const MAX_RPC_BYTES = 64 * 1024;

function rpcRequest(check: ChainCheck) {
  if (check.token === null)
    return { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [check.address, "latest"] };
  const data = `0x70a08231${check.address.slice(2).toLowerCase().padStart(64, "0")}`;
  return { jsonrpc: "2.0", id: 1, method: "eth_call", params: [{ to: check.token, data }, "latest"] };
}

export async function runChainCheck(c: CheckContext, check: ChainCheck): Promise<Outcome> {
  let fetched: Awaited<ReturnType<typeof timedFetch>>;
  try {
    fetched = await timedFetch(c, check.rpc_url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(rpcRequest(check)),
      maxBytes: MAX_RPC_BYTES,
    });
  } catch (err) {
    return failure(err);
  }
  const { answer, durationMs } = fetched;
  const evidence: Partial<Outcome> = { status: answer.status, durationMs };
  let reply: { result?: unknown; error?: { message?: string } };
  try {
    reply = JSON.parse(new TextDecoder().decode(answer.body)) as typeof reply;
  } catch {
    return failed(`The node answered ${answer.status} without JSON.`, evidence);
  }
  if (reply.error) return failed(`The node refused: ${String(reply.error.message ?? "error").slice(0, 300)}`, evidence);
  // An ERC-20 answers one 32-byte word; "0x" is a contract that is not there.
  if (typeof reply.result !== "string" || !/^0x[0-9a-fA-F]{1,64}$/.test(reply.result))
    return failed(`The node's result is not a balance: ${JSON.stringify(reply.result)?.slice(0, 100)}`, evidence);
  const balance = BigInt(reply.result);
  const value = balance.toString();
  return compare(balance, check.operator, BigInt(check.threshold))
    ? passed({ ...evidence, value })
    : failed(`The balance is ${value}; expected ${check.operator} ${check.threshold}.`, { ...evidence, value });
}

/**
 * watches' chain_balance against the local EVM node (hardhat, test/peers/evm.ts): a real balance
 * change, made by real transactions, moves the watch from down to up, for the chain's own coin
 * (eth_getBalance) and for an ERC-20 (balanceOf through eth_call). Here rather than with the other
 * types (test/api/watches.test.ts) because this project is the one that runs the node.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { encodeFunctionData, parseAbi } from "viem";
import { watches } from "../../src/kinds/watching/watches";
import { advance, buyCredits, createResource, opsOn } from "../harness";

const evm = env.TEST_EVM;
/** Hardhat's first account: the token's deployer and minter, unlocked on the node. */
const DEPLOYER = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

async function rpc(method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(evm.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result;
}

/** A transaction from the deployer, mined at once (hardhat automines). */
const send = (tx: Record<string, string>) => rpc("eth_sendTransaction", [{ from: DEPLOYER, ...tx }]);

async function balanceWatch(check: Record<string, unknown>) {
  const { token } = await buyCredits(1, evm.payers[2]!.key);
  const created = await createResource("watches", token, {
    check: { type: "chain_balance", rpc_url: evm.rpcUrl, ...check },
    interval_seconds: 60,
  });
  return { ...created, ops: opsOn(watches, created.id, created.mgmt, token) };
}

describe("watches: chain_balance", () => {
  it("the chain's own coin: down below the threshold, up once a transfer arrives", async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    const w = await balanceWatch({ address, operator: ">=", threshold: "1000000000000000000" });
    await advance(w.id, 0);
    expect(await w.ops.ok("get", "")).toMatchObject({
      state: "down",
      last_check: { ok: false, value: "0", error: "The balance is 0; expected >= 1000000000000000000." },
    });
    await send({ to: address, value: `0x${(2n * 10n ** 18n).toString(16)}` });
    await advance(w.id, 60_000);
    expect(await w.ops.ok("get", "")).toMatchObject({
      state: "up",
      last_check: { ok: true, value: "2000000000000000000" },
    });
  });

  it("an ERC-20's balanceOf, and a contract that is not there fails", async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    const w = await balanceWatch({ address, token: evm.token, operator: ">", threshold: "5000000" });
    expect(await w.ops.ok("check", "/checks")).toMatchObject({ ok: false, value: "0" });
    const data = encodeFunctionData({
      abi: parseAbi(["function mint(address to, uint256 value)"]),
      functionName: "mint",
      args: [address, 7_000_000n],
    });
    await send({ to: evm.token, data });
    expect(await w.ops.ok("check", "/checks")).toMatchObject({ ok: true, value: "7000000" });
    const nowhere = await balanceWatch({
      address,
      token: privateKeyToAccount(generatePrivateKey()).address,
      operator: ">",
      threshold: "0",
    });
    expect(await nowhere.ops.ok("check", "/checks")).toMatchObject({
      ok: false,
      error: expect.stringContaining("not a balance"),
    });
  });
});

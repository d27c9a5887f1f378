/**
 * A local x402 facilitator for tests: the official implementation
 * (@x402/core's x402Facilitator with @x402/evm's exact scheme) behind the
 * HTTP API the service calls (POST /verify, POST /settle), settling on the
 * local EVM peer. Nothing here is the service's code.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { x402Facilitator } from "@x402/core/facilitator";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { createWalletClient, defineChain, http, publicActions, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export interface FacilitatorPeer {
  url: string;
  stop(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let body = "";
  for await (const chunk of req) body += chunk;
  return JSON.parse(body) as Record<string, unknown>;
}

export async function startFacilitator(evm: {
  rpcUrl: string;
  chainId: number;
  relayerKey: Hex;
}): Promise<FacilitatorPeer> {
  const chain = defineChain({
    id: evm.chainId,
    name: "local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [evm.rpcUrl] } },
  });
  const account = privateKeyToAccount(evm.relayerKey);
  const client = createWalletClient({ account, chain, transport: http(evm.rpcUrl, { retryCount: 0 }) }).extend(
    publicActions,
  );
  const signer = toFacilitatorEvmSigner({ ...client, address: account.address } as unknown as Parameters<
    typeof toFacilitatorEvmSigner
  >[0]);
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: `eip155:${evm.chainId}` });

  const server = createServer(async (req, res) => {
    try {
      const body = await readJson(req);
      const route = req.url === "/verify" ? "verify" : req.url === "/settle" ? "settle" : null;
      if (req.method !== "POST" || !route) {
        res.writeHead(404).end();
        return;
      }
      const answer = await facilitator[route](body.paymentPayload as never, body.paymentRequirements as never);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    } catch (err) {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: String(err) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * A real OpenID provider for tests (panva's oidc-provider, on loopback): its development login
 * and consent pages, PKCE required, one confidential client whose redirect_uri the test names.
 * Any login name is an account (its `sub`).
 */
import { createServer, type Server } from "node:http";
import Provider from "oidc-provider";

export interface OidcPeer {
  issuer: string;
  stop(): Promise<void>;
}

export async function startOidcProvider(
  port: number,
  client: { client_id: string; client_secret: string; redirect_uri: string },
): Promise<OidcPeer> {
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.client_id,
        client_secret: client.client_secret,
        redirect_uris: [client.redirect_uri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ["sub"], email: ["email"] },
    findAccount: (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: () => ({ sub, email: `${sub}@example.com` }),
    }),
    features: { devInteractions: { enabled: true } },
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { issuer, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * A create's own times (a wakeup's `at`, an approval's timeout) checked against the life the resource would have
 * (Kind.checkCreate): from real now, or, when a sandbox's credit token pays, from the sandbox's clock
 * (docs/api.md#sandboxes). The payment says whose money it is only later, so the sandbox is asked only when the
 * real-time check refuses. A sandbox's clock is never behind real time and only moves forward, so what passes here
 * still fits the life the resource gets when it joins the sandbox a moment later.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { AnyKind } from "../kind/kind";
import { bearer, creditCredential } from "../auth/credentials";
import { sandboxStub } from "../stubs";
import { sandboxIdOf } from "./ids";

export async function checkCreateTimes(
  c: Context<AppEnv>,
  kind: AnyKind,
  config: Record<string, unknown>,
  ttlSeconds: number,
): Promise<void> {
  if (!kind.checkCreate) return;
  const now = Date.now();
  try {
    kind.checkCreate(config, now + ttlSeconds * 1000, now);
  } catch (err) {
    const sandboxNow = await sandboxNowOfBearer(c);
    if (sandboxNow === null) throw err;
    kind.checkCreate(config, sandboxNow + ttlSeconds * 1000, sandboxNow);
  }
}

/** The clock of the live sandbox whose credit token is the bearer, or null (another token, or none). */
async function sandboxNowOfBearer(c: Context<AppEnv>): Promise<number | null> {
  const token = bearer(c);
  if (!token?.startsWith("zv_")) return null;
  try {
    const cred = await creditCredential(c, token);
    const view = await sandboxStub(c.env, sandboxIdOf(cred.accountId)).view(cred);
    return view.ok && view.value.state === "active" ? view.value.now : null;
  } catch {
    return null; // not a credit token the service knows: the real-time refusal stands, payment will say the rest
  }
}

/** What every MCP method is handed: the app its tools call into, this request, and the revision it speaks. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { AnyKind } from "../kind/kind";
import type { AppFetch } from "./dispatch";
import { RPC_ERRORS, RpcFault } from "./jsonrpc";
import type { Revision } from "./revisions";
import type { Catalogue } from "./tools";

/** A tick of a waiting call: how far it is, out of how much if known, in words. */
export type ProgressSink = (progress: number, total: number | undefined, message: string) => void;

export interface MethodContext {
  app: AppFetch;
  c: Context<AppEnv>;
  /** Every route tool, listed or not. */
  tools(): Catalogue;
  /** The kinds whose typed tools this connection lists (`?toolsets=`). */
  kinds: AnyKind[];
  revision: Revision;
  /** Set when the answer is an event stream: a waiting call reports its progress here. */
  progress?: ProgressSink;
}

/** A method's params, checked by its zod schema; a refusal is -32602 naming the first problem. */
export function paramsOf<T extends z.ZodType>(schema: T, params: unknown): z.infer<T> {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new RpcFault(
    RPC_ERRORS.invalid_params,
    `Invalid params: ${issue?.path.join(".") || "params"}: ${issue?.message}`,
  );
}

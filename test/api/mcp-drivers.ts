/**
 * One interface over every client the MCP tests drive, so the same checks run for each revision:
 * list the tools (every page), call a tool (with `_meta`), close. A JSON-RPC error comes back as
 * `{ rpcError }` rather than thrown, whichever client met it.
 */
import {
  post,
  wireHeaders,
  connectV1,
  connectV2,
  type Body,
  type ListedTool,
  type RpcAnswer,
  type ToolAnswer,
  type ToolPage,
} from "./mcp-clients";

export interface Session {
  list(): Promise<ListedTool[]>;
  call(name: string, args?: Body, meta?: Body): Promise<ToolAnswer & { rpcError?: { code: number; message: string } }>;
  close(): Promise<void>;
}

export interface Driver {
  name: string;
  revision: "2024-11-05" | "2025-03-26" | "2025-11-25" | "2026-07-28";
  connect(bearer?: string, toolsets?: string): Promise<Session>;
}

/** What a client's thrown JSON-RPC error says (the 1.x McpError and the v2 ProtocolError both carry `code`). */
function caught(err: unknown): { rpcError: { code: number; message: string } } & ToolAnswer {
  const { code, message } = err as { code?: unknown; message?: string };
  if (typeof code !== "number") throw err;
  return { rpcError: { code, message: message ?? "" }, content: [] };
}

type ListFn = (params?: { cursor?: string }) => Promise<ToolPage>;

async function allPages(list: ListFn): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await list(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

function v1Driver(name: string, revision: Driver["revision"], version?: "2024-11-05"): Driver {
  return {
    name,
    revision,
    async connect(bearer, toolsets) {
      const { client } = await connectV1({ bearer, toolsets, version });
      return {
        list: () => allPages((p) => client.listTools(p) as ReturnType<ListFn>),
        call: (tool, args = {}, meta) =>
          client
            .callTool({ name: tool, arguments: args, ...(meta ? { _meta: meta } : {}) })
            .then((r) => r as ToolAnswer, caught),
        close: () => client.close(),
      };
    },
  };
}

const v2Driver: Driver = {
  name: "v2 client (2026-07-28, stateless)",
  revision: "2026-07-28",
  async connect(bearer, toolsets) {
    const { client } = await connectV2({ bearer, toolsets });
    return {
      list: async () => (await client.listTools()).tools as ListedTool[],
      call: (tool, args = {}, meta) =>
        client
          .callTool({ name: tool, arguments: args, ...(meta ? { _meta: meta } : {}) })
          .then((r) => r as unknown as ToolAnswer, caught),
      close: () => client.close(),
    };
  },
};

/**
 * A hand-written 2025-03-26 client: initialize without MCP-Protocol-Version (that revision
 * predates the header), then everything in JSON-RPC batches, which that revision has.
 */
const rawBatchDriver: Driver = {
  name: "raw 2025-03-26 client sending batches",
  revision: "2025-03-26",
  async connect(bearer, toolsets) {
    const headers = wireHeaders(undefined, bearer ? { authorization: `Bearer ${bearer}` } : {});
    const query = toolsets ? `?toolsets=${toolsets}` : "";
    const init = await post(
      {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
      },
      headers,
      query,
    );
    const negotiated = ((await init.json()) as RpcAnswer<{ protocolVersion: string }>).result?.protocolVersion;
    if (negotiated !== "2025-03-26") throw new Error(`initialize answered ${negotiated}`);
    let id = 1;
    const batch = async <R>(method: string, params: Body) => {
      const answers = (await (
        await post(
          [
            { jsonrpc: "2.0", method: "notifications/initialized" },
            { jsonrpc: "2.0", id: ++id, method, params },
            { jsonrpc: "2.0", id: ++id, method: "ping" },
          ],
          headers,
          query,
        )
      ).json()) as RpcAnswer<R>[];
      if (answers.length !== 2 || answers[1]!.id !== id) throw new Error(`batch answered ${JSON.stringify(answers)}`);
      return answers[0]!;
    };
    return {
      async list() {
        const tools: ListedTool[] = [];
        let cursor: string | undefined;
        do {
          const { result } = await batch<ToolPage>("tools/list", cursor ? { cursor } : {});
          tools.push(...result!.tools);
          cursor = result!.nextCursor;
        } while (cursor);
        return tools;
      },
      async call(tool, args = {}, meta) {
        const answer = await batch<ToolAnswer>("tools/call", {
          name: tool,
          arguments: args,
          ...(meta ? { _meta: meta } : {}),
        });
        return answer.error ? { rpcError: answer.error, content: [] } : answer.result!;
      },
      close: async () => undefined,
    };
  },
};

export const DRIVERS: Driver[] = [
  v1Driver("1.x SDK client (2025-11-25)", "2025-11-25"),
  v1Driver("1.x SDK client forced to 2024-11-05", "2024-11-05", "2024-11-05"),
  v2Driver,
  rawBatchDriver,
];

/**
 * A tool answer's data: structuredContent where the revision has it, else the JSON its text carries (x402's wrapper
 * undone).
 */
export function data<S = Body>(answer: ToolAnswer<S>): S {
  if (answer.structuredContent) return answer.structuredContent;
  const parsed = JSON.parse(answer.content[0]!.text) as S & { "x402/error"?: { data: S } };
  return parsed["x402/error"] ? parsed["x402/error"].data : parsed;
}

/** Whether the revision carries structuredContent (2025-06-18 on). */
export const structured = (revision: Driver["revision"]) => revision >= "2025-06-18";

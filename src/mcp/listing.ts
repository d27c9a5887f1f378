/**
 * A tool and its result as each revision shows them. The catalogue holds everything once
 * (tools.ts, generic.ts); a revision gets the fields its schema has and no others: annotations
 * from 2025-03-26 (with the title inside them, the only place that revision has for one), `title`,
 * `outputSchema` and `structuredContent` from 2025-06-18, icons from 2025-11-25.
 */
import type { ToolResult } from "./dispatch";
import { features, type Revision } from "./revisions";
import type { ToolFace } from "./tools";

export function toolView(
  tool: ToolFace,
  revision: Revision,
  icons: Record<string, unknown>[],
): Record<string, unknown> {
  const f = features(revision);
  const annotations = f.structured ? tool.annotations : { title: tool.title, ...tool.annotations };
  return {
    name: tool.name,
    ...(f.structured ? { title: tool.title } : {}),
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(f.structured && tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    ...(f.annotations ? { annotations } : {}),
    ...(f.icons ? { icons } : {}),
  };
}

/** Before 2025-06-18 a result is its content alone: the same JSON, as the text it already carries. */
export function resultView(result: ToolResult, revision: Revision): ToolResult {
  if (features(revision).structured || result.structuredContent === undefined) return result;
  const { structuredContent: _dropped, ...rest } = result;
  return rest;
}

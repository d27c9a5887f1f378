/**
 * A request body built from a published JSON Schema alone, the way a client generator fills one:
 * only the required fields; the first alternative of a union; the smallest number a bound allows;
 * arrays and objects at their declared minimum size; a string from its `format`, else from its
 * `pattern` (a small generator below, taking each first alternative and the fewest repetitions, more
 * until `minLength` is met),
 * else "a" repeated to `minLength`. A field that names another resource by its management token
 * says which kinds it takes (`x-management-token-of`): the caller makes one of those first.
 * Anything the validator refuses in such a body is a constraint the schema does not state.
 */
/** The keywords of a JSON Schema (the OpenAPI 3.1 dialect) the generator reads. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  multipleOf?: number;
  const?: unknown;
  enum?: unknown[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  minProperties?: number;
  items?: JsonSchema;
  minItems?: number;
  "x-management-token-of"?: string[];
}
type Schema = JsonSchema;

/**
 * What the walkers read of the OpenAPI document: each operation's parameters and JSON request body (their `$ref`s point
 * into the rest).
 */
export interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOperation>>;
}
export interface OpenApiOperation {
  /** Each a parameter object, or a `$ref` to one. */
  parameters?: (JsonSchema & { in?: string; name?: string; schema?: JsonSchema })[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

/** A string `pattern` matches: first alternatives, and `reps` repetitions for each quantifier (within its bounds). */
export function fromPattern(pattern: string, reps = 0): string {
  let i = 0;
  type Node =
    | { ch: string }
    | { set: [string, string][]; negated: boolean }
    | { alt: Node[][] }
    | { rep: Node; min: number; max: number };
  const escaped = (): Node => {
    const c = pattern[i++]!;
    const classes: Record<string, [string, string][]> = {
      d: [["0", "9"]],
      w: [
        ["a", "z"],
        ["A", "Z"],
        ["0", "9"],
        ["_", "_"],
      ],
      s: [
        [" ", " "],
        ["\t", "\t"],
      ],
    };
    if (c in classes) return { set: classes[c]!, negated: false };
    if (c === "D" || c === "W" || c === "S") return { set: classes[c.toLowerCase()]!, negated: true };
    const named: Record<string, string> = { t: "\t", n: "\n", r: "\r", f: "\f", v: "\v" };
    if (c in named) return { ch: named[c]! };
    const hex = c === "x" ? 2 : c === "u" ? 4 : 0;
    if (hex) {
      const code = parseInt(pattern.slice(i, i + hex), 16);
      i += hex;
      return { ch: String.fromCharCode(code) };
    }
    return { ch: c };
  };
  const charClass = (): Node => {
    i++;
    const negated = pattern[i] === "^";
    if (negated) i++;
    const set: [string, string][] = [];
    for (let first = true; pattern[i] !== "]" || first; first = false) {
      let lo: string;
      if (pattern[i] === "\\") {
        i++;
        const e = escaped();
        if ("set" in e) {
          set.push(...e.set);
          continue;
        }
        lo = (e as { ch: string }).ch;
      } else lo = pattern[i++]!;
      if (pattern[i] === "-" && pattern[i + 1] !== "]") {
        i++;
        const hi = pattern[i] === "\\" ? (i++, (escaped() as { ch: string }).ch) : pattern[i++]!;
        set.push([lo, hi]);
      } else set.push([lo, lo]);
    }
    i++;
    return { set, negated };
  };
  const atom = (): Node => {
    const c = pattern[i]!;
    if (c === "(") {
      i++;
      if (pattern.startsWith("?:", i)) i += 2;
      const inner = alternation();
      i++;
      return inner;
    }
    if (c === "[") return charClass();
    i++;
    if (c === "\\") return escaped();
    if (c === "^" || c === "$") return { ch: "" };
    return { ch: c === "." ? "a" : c };
  };
  const quantified = (): Node => {
    const node = atom();
    const bound = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
    let min: number, max: number;
    if (pattern[i] === "?") [min, max] = [0, 1];
    else if (pattern[i] === "*") [min, max] = [0, Infinity];
    else if (pattern[i] === "+") [min, max] = [1, Infinity];
    else if (bound)
      [min, max] = [
        Number(bound[1]),
        bound[2] === undefined ? Number(bound[1]) : bound[3] === "" ? Infinity : Number(bound[3]),
      ];
    else return node;
    i += bound ? bound[0].length : 1;
    if (pattern[i] === "?") i++;
    return { rep: node, min, max };
  };
  const alternation = (): Node => {
    const branches: Node[][] = [[]];
    while (i < pattern.length && pattern[i] !== ")") {
      if (pattern[i] === "|") {
        i++;
        branches.push([]);
      } else branches[branches.length - 1]!.push(quantified());
    }
    return { alt: branches };
  };
  const fill = (node: Node): string => {
    if ("ch" in node) return node.ch;
    if ("alt" in node) return node.alt[0]!.map(fill).join("");
    if ("rep" in node) return fill(node.rep).repeat(Math.min(node.max, Math.max(node.min, reps)));
    const inSet = (ch: string) => node.set.some(([lo, hi]) => ch >= lo && ch <= hi);
    if (!node.negated) return node.set[0]![0];
    const free = [..."a0-_.b"].find((ch) => !inSet(ch));
    if (free === undefined) throw new Error(`no character outside the class in ${pattern}`);
    return free;
  };
  return fill(alternation());
}

export type TokenOf = (kinds: string[]) => Promise<string>;

/** A body for `schema` (a node of `doc`, which holds its `$ref`s). */
export function bodyFromSchema(doc: object, schema: Schema, tokenOf: TokenOf): Promise<unknown> {
  /** A `$ref` is a JSON pointer into the document, whose node there is a schema. */
  const resolve = (node: Schema): Schema =>
    node.$ref
      ? resolve(
          node.$ref
            .split("/")
            .slice(1)
            .reduce<unknown>((n, key) => (n as Record<string, unknown>)[key], doc) as Schema,
        )
      : node;

  const text = async (s: Schema): Promise<string> => {
    if (s["x-management-token-of"]) return tokenOf(s["x-management-token-of"] as string[]);
    if (s.format === "uri") return "https://example.com/";
    if (s.format === "date-time") return new Date().toISOString();
    if (s.format === "email") return "someone@example.com";
    const min: number = s.minLength ?? 0;
    if (!s.pattern) return "a".repeat(Math.max(min, 1));
    const matches = new RegExp(s.pattern, "u");
    for (let reps = 0; reps <= min + 1; reps++) {
      const out = fromPattern(s.pattern, reps);
      if (matches.test(out) && out.length >= min && out.length <= (s.maxLength ?? Infinity)) return out;
    }
    throw new Error(`no string of ${min}+ characters fills ${s.pattern}`);
  };

  const number = (s: Schema, integer: boolean): number => {
    let v: number = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 0.5) : 0);
    if (s.maximum !== undefined) v = Math.min(v, s.maximum);
    return s.multipleOf ? Math.ceil(v / s.multipleOf) * s.multipleOf : v;
  };

  const fill = async (node: Schema): Promise<unknown> => {
    let s = resolve(node);
    if ("const" in s) return s.const;
    if (s.enum) return s.enum[0];
    const union: Schema[] | undefined = s.oneOf ?? s.anyOf;
    if (union) {
      // A union of whole schemas: its first; of `required` lists beside properties: the first list.
      const first = resolve(union[0]!);
      const rest = { ...s, oneOf: undefined, anyOf: undefined };
      if (!s.type && !s.properties) return fill({ ...rest, ...first });
      s = {
        ...rest,
        ...first,
        type: s.type ?? first.type,
        properties: { ...s.properties, ...first.properties },
        required: [...(s.required ?? []), ...(first.required ?? [])],
      };
    }
    const type = Array.isArray(s.type)
      ? s.type.find((t: string) => t !== "null")
      : (s.type ?? (s.properties ? "object" : undefined));
    switch (type) {
      case "object": {
        const out: Record<string, unknown> = {};
        for (const key of new Set<string>(s.required ?? []))
          out[key] = await fill(
            s.properties?.[key] ?? (typeof s.additionalProperties === "object" ? s.additionalProperties : {}),
          );
        const names: Schema = s.propertyNames ? resolve(s.propertyNames) : {};
        for (let n = 0; Object.keys(out).length < (s.minProperties ?? 0); n++) {
          const key = names.pattern ? fromPattern(names.pattern, n) : `k${n}`;
          if (!(key in out))
            out[key] = await fill(typeof s.additionalProperties === "object" ? s.additionalProperties : {});
        }
        return out;
      }
      case "array": {
        const items: unknown[] = [];
        for (let n = 0; n < (s.minItems ?? 0); n++) items.push(await fill(s.items ?? {}));
        return items;
      }
      case "string":
        return text(s);
      case "integer":
        return number(s, true);
      case "number":
        return number(s, false);
      case "boolean":
        return false;
      case "null":
        return null;
      default:
        return {};
    }
  };
  return fill(schema);
}

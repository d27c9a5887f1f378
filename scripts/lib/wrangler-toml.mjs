/**
 * Reads an environment's section of wrangler.toml (parsed with smol-toml), and makes the few edits setup
 * needs (a var's value, a D1 database_id) as line edits, so the file keeps its comments, order and
 * layout. Each edit is checked by parsing the result: a file laid out in a way the edit does not
 * understand is refused rather than damaged.
 */
import { readFile } from "node:fs/promises";
import { parse } from "smol-toml";

/** The file's text and its `[env.<env>]` section (vars and bindings), or an error that says what is missing. */
export async function readEnvironment(configPath, env) {
  const text = await readFile(configPath, "utf8");
  const config = parse(text);
  const section = config.env?.[env];
  if (!section)
    throw new Error(
      `${configPath} has no [env.${env}] section (it has: ${Object.keys(config.env ?? {}).join(", ") || "none"}).`,
    );
  return { text, config, section };
}

const HEADER = /^\s*(\[\[?)\s*([^\]#]+?)\s*\]\]?\s*(#.*)?$/;
const keyOf = (raw) => raw.replace(/["'\s]/g, "");

/** The line ranges [start, end) of the tables named `name` (`[name]`, or each `[[name]]` when `array`). */
function tables(lines, name, array) {
  const out = [];
  let open = null;
  lines.forEach((line, i) => {
    const m = HEADER.exec(line);
    if (!m) return;
    if (open) out.push({ ...open, end: i });
    open = keyOf(m[2]) === name && (m[1] === "[[") === array ? { start: i } : null;
  });
  if (open) out.push({ ...open, end: lines.length });
  return out;
}

/** The line of `key = "…"` inside a table, split around its string value. */
function findKey(lines, table, key) {
  const pattern = new RegExp(`^(\\s*${key}\\s*=\\s*)("(?:[^"\\\\]|\\\\.)*"|'[^']*')(.*)$`);
  for (let i = table.start + 1; i < table.end; i++) {
    const m = pattern.exec(lines[i]);
    if (m)
      return {
        index: i,
        before: m[1],
        value: m[2].startsWith("'") ? m[2].slice(1, -1) : JSON.parse(m[2]),
        after: m[3],
      };
  }
  return null;
}

/**
 * Where a new key goes: after the table's last key, before the comments and blank lines that lead into the next table.
 */
function insertionPoint(lines, table) {
  let at = table.end;
  while (at - 1 > table.start && /^\s*(#.*)?$/.test(lines[at - 1])) at--;
  return at;
}

function checked(text, holds, what) {
  let ok = false;
  try {
    ok = holds(parse(text));
  } catch {}
  if (!ok)
    throw new Error(
      `Could not write ${what} into wrangler.toml by a line edit (is the section laid out differently?): ` +
        `set it by hand and run setup again.`,
    );
  return text;
}

/** TOML basic string: JSON's escapes are all valid TOML. */
const literal = (value) => JSON.stringify(value);

/** Sets `[env.<env>.vars] name = "value"`, replacing the value in place or adding the key. */
export function setVar(text, env, name, value) {
  const lines = text.split("\n");
  const [table] = tables(lines, `env.${env}.vars`, false);
  if (!table) lines.push("", `[env.${env}.vars]`, `${name} = ${literal(value)}`);
  else {
    const found = findKey(lines, table, name);
    if (found) lines[found.index] = `${found.before}${literal(value)}${found.after}`;
    else lines.splice(insertionPoint(lines, table), 0, `${name} = ${literal(value)}`);
  }
  return checked(lines.join("\n"), (config) => config.env?.[env]?.vars?.[name] === value, `[env.${env}.vars] ${name}`);
}

/** Sets database_id in the `[[env.<env>.d1_databases]]` entry with this binding. */
export function setDatabaseId(text, env, binding, id) {
  const lines = text.split("\n");
  const table = tables(lines, `env.${env}.d1_databases`, true).find(
    (t) => findKey(lines, t, "binding")?.value === binding,
  );
  if (!table) throw new Error(`wrangler.toml has no [[env.${env}.d1_databases]] with binding = "${binding}".`);
  const found = findKey(lines, table, "database_id");
  if (found) lines[found.index] = `${found.before}${literal(id)}${found.after}`;
  else
    lines.splice((findKey(lines, table, "database_name")?.index ?? table.start) + 1, 0, `database_id = ${literal(id)}`);
  return checked(
    lines.join("\n"),
    (config) => config.env?.[env]?.d1_databases?.find((d) => d.binding === binding)?.database_id === id,
    `[env.${env}] ${binding}'s database_id`,
  );
}

/** Every queue the environment names: producers, consumers and their dead-letter queues, each once, in order. */
export function queueNames(section) {
  const names = [
    ...(section.queues?.producers ?? []).map((p) => p.queue),
    ...(section.queues?.consumers ?? []).flatMap((c) => [c.queue, c.dead_letter_queue]),
  ];
  return [...new Set(names.filter(Boolean))];
}

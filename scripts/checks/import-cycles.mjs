#!/usr/bin/env node
/**
 * `npm run check:imports`: the import graph of src/, durable-objects/ and worker.ts has no cycle,
 * type-only imports and dynamic import() included (docs/architecture.md: imports run one way:
 * entry → registry and routes → kinds → platform → kind contract and rpc types). Prints each
 * cycle found, shortest first, and exits 1; prints the module count and 0 cycles otherwise.
 * The graph is read with TypeScript's own pre-processor (no type checking: it takes seconds).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const ROOTS = ["worker.ts", "src", "durable-objects"];
const root = process.cwd();

function files(entry) {
  if (!existsSync(entry)) return [];
  if (statSync(entry).isFile()) return entry.endsWith(".ts") && !entry.endsWith(".d.ts") ? [entry] : [];
  return readdirSync(entry).flatMap((name) => files(path.join(entry, name)));
}

/** A relative specifier as the bundler resolves it: the file itself, `.ts` added, or the folder's index. */
function resolve(from, specifier) {
  if (!specifier.startsWith(".")) return null;
  const base = path.normalize(path.join(path.dirname(from), specifier));
  for (const candidate of [base, `${base}.ts`, path.join(base, "index.ts"), base.replace(/\.m?js$/, ".ts")]) {
    if (existsSync(candidate) && statSync(candidate).isFile() && candidate.endsWith(".ts")) return candidate;
  }
  return null;
}

const modules = ROOTS.flatMap(files).map((f) => path.relative(root, f));
const edges = new Map(
  modules.map((file) => {
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = info.importedFiles.map((i) => resolve(file, i.fileName)).filter((t) => t !== null);
    return [file, [...new Set(targets)]];
  }),
);

// Tarjan's strongly connected components: every component of more than one module (or a self-import) holds cycles.
let index = 0;
const stack = [];
const meta = new Map();
const components = [];
function visit(v) {
  meta.set(v, { index, low: index, onStack: true });
  index++;
  stack.push(v);
  for (const w of edges.get(v) ?? []) {
    if (!meta.has(w)) {
      visit(w);
      meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).low);
    } else if (meta.get(w).onStack) meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).index);
  }
  if (meta.get(v).low === meta.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      meta.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (edges.get(v) ?? []).includes(v)) components.push(component);
  }
}
for (const m of modules) if (!meta.has(m)) visit(m);

/** One shortest cycle through `start` inside its component (breadth-first), to show the knot plainly. */
function shortestCycle(start, members) {
  const inside = new Set(members);
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of edges.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const cycle = [start];
        for (let u = v; u !== start; u = previous.get(u)) cycle.splice(1, 0, u);
        return [...cycle, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

if (components.length === 0) {
  console.log(`import cycles: 0 (${modules.length} modules, type-only and dynamic imports included)`);
} else {
  const total = components.reduce((n, c) => n + c.length, 0);
  console.error(`import cycles: ${components.length} knot(s) over ${total} modules`);
  for (const component of components.sort((a, b) => a.length - b.length)) {
    const cycle = shortestCycle(component.sort()[0], component);
    console.error(`  ${component.length} modules, e.g. ${cycle.join(" → ")}`);
  }
  process.exitCode = 1;
}

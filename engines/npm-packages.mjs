#!/usr/bin/env node
/**
 * The engines image's npm packages: what scripts/engines.mjs imports from npm (playwright-core, and what that
 * needs), pinned exactly as the project's package-lock.json pins them, integrity included, so the image runs
 * the versions the tests ran and `npm ci` checks every tarball, without the Worker's own dependencies.
 *
 *   node engines/npm-packages.mjs <project dir> <out dir>
 *
 * reads <project dir>/package.json, package-lock.json and scripts/engines.mjs, and writes package.json and
 * package-lock.json to <out dir> (the project's name and version kept: /version reports that version).
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The packages a module imports by bare name (`node:` built-ins left out). */
export function npmImports(source) {
  const names = new Set();
  for (const m of source.matchAll(
    /(?:^|\n)\s*import\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
  )) {
    const spec = m[1] ?? m[2];
    if (spec.startsWith("node:") || spec.startsWith(".") || spec.startsWith("/")) continue;
    names.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]);
  }
  return [...names].sort();
}

/** package.json and package-lock.json holding `names` and their dependencies, entries copied from `lock`. */
export function subset(pkg, lock, names) {
  const packages = {};
  const missing = [];
  // npm's lookup: a dependency of node_modules/a is node_modules/a/node_modules/b when that exists, else a level up.
  const resolve = (name, from) => {
    for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf("/node_modules/")))) {
      const key = `${dir ? `${dir}/` : ""}node_modules/${name}`;
      if (lock.packages[key]) return key;
      if (!dir) return null;
    }
  };
  const add = (name, from) => {
    const key = resolve(name, from);
    if (!key) return void missing.push(name);
    if (packages[key]) return;
    const { dev, devOptional, peer, optional, ...entry } = lock.packages[key];
    packages[key] = optional ? { ...entry, optional } : entry;
    for (const dep of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) add(dep, key);
  };
  for (const name of names) add(name, "");
  if (missing.length) throw new Error(`Not in package-lock.json: ${missing.join(", ")}`);
  const dependencies = Object.fromEntries(names.map((n) => [n, lock.packages[`node_modules/${n}`].version]));
  return {
    packageJson: { name: pkg.name, version: pkg.version, private: true, dependencies },
    packageLock: {
      name: pkg.name,
      version: pkg.version,
      lockfileVersion: 3,
      requires: true,
      packages: { "": { name: pkg.name, version: pkg.version, dependencies }, ...packages },
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [project, out] = process.argv.slice(2);
  if (!project || !out) throw new Error("usage: node engines/npm-packages.mjs <project dir> <out dir>");
  const read = (file) => readFileSync(path.join(project, file), "utf8");
  const names = npmImports(read("scripts/engines.mjs"));
  const { packageJson, packageLock } = subset(
    JSON.parse(read("package.json")),
    JSON.parse(read("package-lock.json")),
    names,
  );
  writeFileSync(path.join(out, "package.json"), `${JSON.stringify(packageJson, null, 2)}\n`);
  writeFileSync(path.join(out, "package-lock.json"), `${JSON.stringify(packageLock, null, 2)}\n`);
  console.log(
    `npm packages for the engines: ${Object.keys(packageLock.packages)
      .filter(Boolean)
      .map((k) => `${k.replace(/^.*node_modules\//, "")}@${packageLock.packages[k].version}`)
      .join(", ")}`,
  );
}

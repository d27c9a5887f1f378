/**
 * A Worker whose global scope does a fixed amount of work of the kind a start-up does (small objects
 * and closures made, strings built, maps filled, property lookups), none of it optimisable away: the
 * unit bench/startup.mjs measures the service's start-up in. Change ROUNDS and every ratio recorded
 * in bench/README.md changes with it.
 */
const ROUNDS = 60_000;

const table = new Map();
let sum = 0;
for (let i = 0; i < ROUNDS; i++) {
  const name = `field_${i % 997}_${i}`;
  const entry = { name, index: i, check: (v) => typeof v === "string" && v.length <= i % 64, parts: name.split("_") };
  table.set(name, entry);
  sum = (sum + entry.parts.length + (entry.check(name) ? 1 : 0) + name.charCodeAt(name.length - 1)) | 0;
  if (table.size > 5_000) table.clear();
}

export default {
  fetch: () => new Response(String(sum)),
};

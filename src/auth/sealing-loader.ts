/**
 * sealing.ts for the modules every isolate evaluates at start-up but that seal and open only later (a
 * resource object's outbox, the delivery consumer): @noble/ciphers computes AES's tables when it loads, a
 * tenth of a start-up (bench/README.md). `loadSealing` imports it (a resource object does before it serves,
 * the consumer before an attempt); `sealing` then hands it over synchronously, as a transaction needs it.
 */
type Sealing = typeof import("./sealing");

let loaded: Sealing | undefined;

export async function loadSealing(): Promise<Sealing> {
  return (loaded ??= await import("./sealing"));
}

export function sealing(): Sealing {
  if (!loaded) throw new Error("sealing used before loadSealing()");
  return loaded;
}

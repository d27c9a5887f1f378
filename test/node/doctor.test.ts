/**
 * `npm run doctor -- <url>` prints a running service's readiness report and says by its exit status whether it is
 * ready.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startWranglerDev } from "../../scripts/wrangler-dev.mjs";

const TOKEN = "doctor-test-token-0123456789-abcdefghijklmnop";
let server: Awaited<ReturnType<typeof startWranglerDev>>;

beforeAll(async () => {
  server = await startWranglerDev({ vars: { ADMIN_TOKEN: TOKEN } });
}, 120_000);
afterAll(() => server?.stop());

const doctor = (args: string[], env: Record<string, string> = {}) =>
  promisify(execFile)("node", ["scripts/doctor.mjs", ...args], { env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );

it("prints every check of a ready service and exits 0", async () => {
  const { code, out } = await doctor([server.url], { ADMIN_TOKEN: TOKEN });
  expect(out).toMatch(/^liveness {2}ok/m);
  expect(out).toMatch(/^readiness ready/m);
  for (const name of ["configuration", "d1", "r2", "queue", "durable_objects", "keys", "settlement"])
    expect(out).toMatch(new RegExp(`^ {2}ok {3}${name}\\b`, "m"));
  // `npm run dev`'s engines are not started here: reported as a warning, not a failure.
  expect(out).toMatch(/^ {2}warn engine/m);
  expect(code).toBe(0);
});

it("exits non-zero without the operator token or with a wrong one, and for a service that is not there", async () => {
  const none = await doctor([server.url], { ADMIN_TOKEN: "" });
  expect(none.code).toBe(1);
  expect(none.out).toMatch(/No operator token/);
  const wrong = await doctor([server.url, "--token", "not-the-token"]);
  expect(wrong.code).toBe(1);
  expect(wrong.out).toMatch(/readiness: 401/);
  const gone = await doctor(["http://127.0.0.1:1"]);
  expect(gone.code).toBe(2);
});

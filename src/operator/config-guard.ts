/**
 * Fails a misconfigured deployment closed: while config-check.ts finds a problem, every route that
 * could take money, sign, or publish the service's addresses answers 503 `service_misconfigured`
 * naming the settings and their fixes, so a forgotten value is never a 500 nor a payment to the
 * wrong place. Liveness, the documentation and the operator's readiness report stay up so the
 * operator can see why. A weak operator token closes only the operator endpoints.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv, Env } from "../env";
import { AppError } from "../http/errors";
import { configProblems } from "./config-check";
import type { ConfigProblem } from "./config-problem";

/** The paths the guard covers (app.ts installs it there); the operator's own are judged by their own scope. */
export const GUARDED_PATHS = ["/v1/*", "/mcp", "/oauth/*", "/p/*", "/.well-known/*", "/admin", "/admin/*"];
const isOperatorPath = (path: string) =>
  path.startsWith("/v1/admin/") || path === "/admin" || path.startsWith("/admin/");

// The settings of an isolate never change under it: one check per isolate, not per request.
const checked = new WeakMap<Env, ConfigProblem[]>();

export function deploymentProblems(env: Env): ConfigProblem[] {
  let problems = checked.get(env);
  if (!problems) {
    problems = configProblems(env as unknown as Record<string, string | undefined>);
    checked.set(env, problems);
  }
  return problems;
}

export function misconfigured(problems: ConfigProblem[]): AppError {
  const named = problems.map((p) => `${p.setting} ${p.problem}. ${p.fix}`).join(" ");
  return new AppError("service_misconfigured", `This deployment is not configured to serve: ${named}`, {
    extra: { settings: problems.map(({ setting, problem, fix }) => ({ setting, problem, fix })) },
    headers: { "Retry-After": "300" },
  });
}

export const configGuard = createMiddleware<AppEnv>(async (c, next) => {
  const problems = deploymentProblems(c.env);
  if (problems.length) {
    // The operator endpoints (readiness among them) stay open to a service-wide problem: they are how it is found.
    const scope = isOperatorPath(c.req.path) ? "operator" : "service";
    const blocking = problems.filter((p) => p.scope === scope);
    if (blocking.length) throw misconfigured(blocking);
  }
  await next();
});

/** Ask: free feature requests and abuse reports, and the operator endpoints that read and act on them. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { registerAdminRoutes } from "./admin";
import { registerAskRoutes } from "./routes";

export { sweepAskSalts } from "./privacy";

export function registerAsk(app: OpenAPIHono<AppEnv>): void {
  registerAskRoutes(app);
  registerAdminRoutes(app);
}

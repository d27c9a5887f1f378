/**
 * A heartbeat watch's ping address: a job GETs or POSTs `/p/{public_id}` when it ran (as with
 * healthchecks.io or Uptime Kuma's push monitors), or `/fail` when it ran and failed. The next
 * scheduled check reads the last ping; the ping itself only records.
 */
import { definePublicFace, type PublicAnswer } from "../../../kind/public-face";
import { ping } from "./store";
import type { WatchConfig } from "./schema";

const METHODS = ["GET", "HEAD", "POST"] as const;

export const heartbeatFace = definePublicFace<WatchConfig>({
  enabled: (config) => config.check.type === "heartbeat",
  routes: [
    {
      name: "ping",
      path: "",
      methods: [...METHODS],
      maxBodyBytes: 16 * 1024,
      answers: ["text"],
      summary: "Heartbeat: the job ran (a body is ignored).",
    },
    {
      name: "fail",
      path: "/fail",
      methods: [...METHODS],
      maxBodyBytes: 16 * 1024,
      answers: ["text"],
      summary: "Heartbeat: the job ran and failed; the next check fails.",
    },
  ],
  handle(store, _config, request): PublicAnswer {
    ping(store, request.route === "fail");
    return { type: "text", body: "OK" };
  },
});

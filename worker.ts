/**
 * What wrangler deploys (`main` in wrangler.toml): the worker's handlers (src/index.ts) and the
 * Durable Object classes beside them. Kept outside src/ so that src/ never imports durable-objects/:
 * the objects depend on the platform, not the other way round.
 */
export { default } from "./src/index";
export { AccountObject } from "./durable-objects/AccountObject";
export { ResourceObject } from "./durable-objects/ResourceObject";
export { SandboxObject } from "./durable-objects/SandboxObject";
// The engines image as a Cloudflare Container: bound only when wrangler.toml's commented block is uncommented.
export { EngineContainer } from "./durable-objects/EngineContainer";

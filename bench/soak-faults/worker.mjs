/**
 * The soak's front (bench/soak.mjs): a second worker in the same `wrangler dev`, listed first so it is the
 * one wrangler serves. It forwards every request unchanged to the service (a service binding), except
 * `POST /__soak/faults/{resource id}`, which hands its JSON body to that resource's object's injectFaults
 * (durable-objects/resource/test-faults.ts): the project's fault hooks are RPC methods that only a worker
 * bound to the namespace can call, and only a development or test service accepts. Never deployed.
 */
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const id = /^\/__soak\/faults\/([\w-]+)$/.exec(url.pathname)?.[1];
    if (!id || request.method !== "POST") return env.SERVICE.fetch(request);
    try {
      await env.RESOURCES.get(env.RESOURCES.idFromName(id)).injectFaults(await request.json());
      return new Response(null, { status: 204 });
    } catch (err) {
      return new Response(String(err?.message ?? err), { status: 409 });
    }
  },
};

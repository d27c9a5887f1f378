/**
 * R2 buckets and Queues as wrangler 4.86 uses them for setup and deploy: list and create buckets; list
 * (by name), create and get queues, and the Worker consumers that `wrangler deploy` attaches to them.
 */
import { hexId, jsonBody, notFound, now, route, type Queue, type Route } from "./state";

const queueView = (q: Queue) => ({
  queue_id: q.queue_id,
  queue_name: q.queue_name,
  created_on: q.created_on,
  modified_on: q.modified_on,
  producers: [],
  producers_total_count: 0,
  consumers: q.consumers.map((c) => ({ ...c, script: c.script_name })),
  consumers_total_count: q.consumers.length,
});

function queueById(queues: Map<string, Queue>, id: string) {
  return [...queues.values()].find((q) => q.queue_id === id);
}

export const storageRoutes: Route[] = [
  route("GET", "/r2/buckets", ({ account }) => ({ result: { buckets: [...account.buckets.values()] } })),
  route("POST", "/r2/buckets", ({ account, body, entry }) => {
    const { name } = jsonBody<{ name: string }>(body);
    entry.summary = `create ${name}`;
    if (account.buckets.has(name))
      return {
        status: 409,
        errors: [{ code: 10004, message: "The bucket you tried to create already exists, and you own it." }],
      };
    const bucket = { name, creation_date: now() };
    account.buckets.set(name, bucket);
    return { result: bucket };
  }),
  route("GET", "/r2/buckets/:name", ({ account, params }) => {
    const bucket = account.buckets.get(params.name!);
    return bucket ? { result: bucket } : notFound(10006, "The specified bucket does not exist.");
  }),

  route("GET", "/queues", ({ account, query }) => {
    const names = query.getAll("name");
    const all = [...account.queues.values()].filter((q) => names.length === 0 || names.includes(q.queue_name));
    return {
      result: all.map(queueView),
      resultInfo: {
        page: Number(query.get("page") ?? 1),
        per_page: 100,
        count: all.length,
        total_count: all.length,
        total_pages: 1,
      },
    };
  }),
  route("POST", "/queues", ({ account, body, entry }) => {
    const { queue_name } = jsonBody<{ queue_name: string }>(body);
    entry.summary = `create ${queue_name}`;
    if (account.queues.has(queue_name))
      return { status: 409, errors: [{ code: 11009, message: "A queue with this name already exists" }] };
    const queue: Queue = { queue_id: hexId(), queue_name, created_on: now(), modified_on: now(), consumers: [] };
    account.queues.set(queue_name, queue);
    return { result: queueView(queue) };
  }),
  route("GET", "/queues/:queue_id", ({ account, params }) => {
    const queue = queueById(account.queues, params.queue_id!);
    return queue ? { result: queueView(queue) } : notFound(11000, "Queue not found");
  }),
  route("GET", "/queues/:queue_id/consumers", ({ account, params }) => {
    const queue = queueById(account.queues, params.queue_id!);
    return queue ? { result: queue.consumers } : notFound(11000, "Queue not found");
  }),

  route("POST", "/queues/:queue_id/consumers", ({ account, params, body, entry }) => {
    const queue = queueById(account.queues, params.queue_id!);
    if (!queue) return notFound(11000, "Queue not found");
    const consumer = { ...jsonBody<Queue["consumers"][number]>(body), consumer_id: hexId() };
    entry.summary = `consumer ${consumer.script_name} on ${queue.queue_name}`;
    if (queue.consumers.some((c) => c.script_name === consumer.script_name))
      return { status: 400, errors: [{ code: 11004, message: "A consumer for this script already exists" }] };
    queue.consumers.push(consumer);
    return { result: consumer };
  }),
  route("PUT", "/queues/:queue_id/consumers/:consumer_id", ({ account, params, body, entry }) => {
    const queue = queueById(account.queues, params.queue_id!);
    const index = queue?.consumers.findIndex((c) => c.consumer_id === params.consumer_id) ?? -1;
    if (!queue || index < 0) return notFound(11000, "Consumer not found");
    const consumer = { ...jsonBody<Queue["consumers"][number]>(body), consumer_id: params.consumer_id! };
    entry.summary = `consumer ${consumer.script_name} on ${queue.queue_name}`;
    queue.consumers[index] = consumer;
    return { result: consumer };
  }),
];

/** A JSON value: what crosses Durable Object RPC and goes out in a response body. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** Errors per API.md §9: problem+json everywhere, request ids, the right status for each way a request can be wrong. */
import { describe, expect, it } from "vitest";
import { balanceOf, buyCredits, call, json } from "../harness";

describe("errors", () => {
  it("every response carries X-Request-Id, echoed in problem bodies", async () => {
    const ok = await call("GET", "/v1/prices");
    expect(ok.headers.get("x-request-id")).toMatch(/^req_/);
    const res = await call("GET", "/v1/nowhere");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const body = await json(res);
    expect(body).toMatchObject({ status: 404, code: "not_found", title: "Not found" });
    expect(body.request_id).toBe(res.headers.get("x-request-id"));
    expect(body.type).toMatch(/\/errors\/not_found$/);
  });

  it("a non-JSON body is 415, malformed JSON 400, an oversized body 413", async () => {
    const { token } = await buyCredits(0.25);
    const auth = { authorization: `Bearer ${token}` };
    const text = await call("POST", "/v1/counters", { body: "{}", headers: { ...auth, "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect((await json(text)).code).toBe("unsupported_media_type");
    const broken = await call("POST", "/v1/counters", { body: "{", headers: auth });
    expect(broken.status).toBe(400);
    const huge = await call("POST", "/v1/counters", { body: JSON.stringify({ label: "x".repeat(1024 * 1024) }), headers: auth });
    expect(huge.status).toBe(413);
    expect((await json(huge)).code).toBe("payload_too_large");
    expect((await balanceOf(token)).spent_usd).toBe(0);
  });

  it("a malformed Authorization header is 401 with WWW-Authenticate", async () => {
    const res = await call("GET", "/v1/credits/balance", { headers: { authorization: "Basic abc" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer resource_metadata="https:\/\/zeitvault\.test\/\.well-known\/oauth-protected-resource"$/);
  });

  it("a path id that is not a resource id is 422 with its path", async () => {
    const res = await call("GET", "/v1/resources/not-an-id");
    expect(res.status).toBe(422);
    expect((await json(res)).errors[0].path).toBe("id");
  });

  it("answers CORS preflight for any origin", async () => {
    const res = await call("OPTIONS", "/v1/counters", { headers: { origin: "https://agent.example", "access-control-request-method": "POST" } });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});

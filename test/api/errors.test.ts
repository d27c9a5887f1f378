/**
 * Errors per docs/api.md#errors: problem+json everywhere, request ids, the right status for each way a request
 * can be wrong, and a detail that names the fix (the right token in the right header, how to pay,
 * the allowed methods, the path that was meant, the field at fault), with a page behind every `type`.
 */
import { describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/http/error-codes";
import {
  balanceOf,
  buyCredits,
  call,
  createResource,
  json,
  problemOf,
  type OpenApiDocument,
  type Problem,
} from "../harness";

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
    const huge = await call("POST", "/v1/counters", {
      body: JSON.stringify({ label: "x".repeat(1024 * 1024) }),
      headers: auth,
    });
    expect(huge.status).toBe(413);
    expect((await json(huge)).code).toBe("payload_too_large");
    expect((await balanceOf(token)).spent_usd).toBe(0);
  });

  it("a malformed Authorization header is 401 with WWW-Authenticate", async () => {
    const res = await call("GET", "/v1/credits/balance", { headers: { authorization: "Basic abc" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(
      /^Bearer resource_metadata="https:\/\/zeitvault\.test\/\.well-known\/oauth-protected-resource"$/,
    );
  });

  it("a path id that is not a resource id is 422 with its path", async () => {
    const res = await call("GET", "/v1/resources/not-an-id");
    expect(res.status).toBe(422);
    expect((await json<Problem>(res)).errors![0]!.path).toBe("id");
  });

  it("answers CORS preflight for any origin", async () => {
    const res = await call("OPTIONS", "/v1/counters", {
      headers: { origin: "https://agent.example", "access-control-request-method": "POST" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("a token of the wrong kind is told which kind it is and where each goes", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token);
    const increment = (headers: Record<string, string>) =>
      call("POST", `/v1/counters/${id}/increment`, { body: {}, headers });

    const creditAsManagement = await problemOf(await increment({ authorization: `Bearer ${token}` }), 401);
    expect(creditAsManagement.detail).toBe(
      "This is a credit token (zv_…); this route takes the resource's management token (zvm_…, returned " +
        "once when it was created) in Authorization, and a credit token or access token in X-CREDIT-TOKEN.",
    );
    const jwtAsManagement = await problemOf(
      await increment({ authorization: "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln" }),
      401,
    );
    expect(jwtAsManagement.detail).toMatch(
      /^This is an access token \(JWT\); this route takes the resource's management token \(zvm_…/,
    );
    const managementInCreditHeader = await problemOf(
      await increment({ authorization: `Bearer ${mgmt}`, "x-credit-token": mgmt }),
      401,
    );
    expect(managementInCreditHeader.detail).toMatch(
      new RegExp(
        /^X-CREDIT-TOKEN holds a management token \(zvm_…\); send it in `Authorization: Bearer zvm_…`, /.source +
          /and a credit token \(zv_…\) in X-CREDIT-TOKEN/.source,
      ),
    );
    const managementAsCredit = await problemOf(
      await call("POST", "/v1/counters", { body: {}, headers: { authorization: `Bearer ${mgmt}` } }),
      401,
    );
    expect(managementAsCredit.detail).toMatch(
      new RegExp(
        /^This is a management token \(zvm_…\); this route takes a credit token \(zv_…\) /.source +
          /or an access token in `Authorization: Bearer …`/.source,
      ),
    );
    // One character off (never the same one: a token ending in x would stay valid).
    const typo = await problemOf(
      await increment({ authorization: `Bearer ${mgmt.slice(0, -1)}${mgmt.endsWith("x") ? "y" : "x"}` }),
      401,
    );
    expect(typo.detail).toMatch(/^This is not a valid management token \(zvm_…\): check for a typo/);
    const other = await createResource("counters", token);
    const foreign = await problemOf(await increment({ authorization: `Bearer ${other.mgmt}` }), 403);
    expect(foreign.detail).toBe(
      `This management token is ${other.id}'s, not ${id}'s: use the token returned when ${id} was created.`,
    );
  });

  it("a paid call without payment names the header to send and the price in dollars", async () => {
    const { token } = await buyCredits(1);
    const { id, mgmt } = await createResource("counters", token);
    const op = await problemOf(
      await call("POST", `/v1/counters/${id}/increment`, { body: {}, headers: { authorization: `Bearer ${mgmt}` } }),
      402,
    );
    expect(op.detail).toMatch(
      new RegExp(
        /^counters increment costs \$0\.0001: send a credit token in the X-CREDIT-TOKEN header /.source +
          /\(beside the management token in Authorization\), or sign the x402 terms/.source,
      ),
    );
    expect(op.detail).toContain("PAYMENT-SIGNATURE");
    const create = await problemOf(await call("POST", "/v1/counters", { body: { ttl_seconds: 86400 } }), 402);
    expect(create.detail).toMatch(
      new RegExp(
        /^Create a counters resource for 86400 s costs \$0\.\d+: send a credit token as `Authorization: Bearer zv_…` /
          .source + /\(buy one at POST \/v1\/credits\), or sign the x402 terms/.source,
      ),
    );
    const purchase = await problemOf(await call("POST", "/v1/credits", { body: { amount_usd: 5 } }), 402);
    expect(purchase.detail).toMatch(/^Buy \$5 of credits costs \$5: sign the x402 terms/);
  });

  it("a known path with another method is 405, Allow from the routes registered; OPTIONS, HEAD per HTTP", async () => {
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
      const res = await call(method, "/v1/counters");
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST, OPTIONS");
      expect(await problemOf(res)).toMatchObject({
        code: "method_not_allowed",
        detail: `/v1/counters does not take ${method}; it takes POST (see its entry in /openapi.json).`,
      });
    }
    // A resource's own path: the kind's operations there (get, set) and no others.
    const id = "r_0000000000000000000000";
    const resource = await call("DELETE", `/v1/counters/${id}`);
    expect(resource.status).toBe(405);
    expect(resource.headers.get("allow")).toBe("GET, HEAD, PUT, OPTIONS");
    const lifecycle = await call("PUT", `/v1/resources/${id}/extend`);
    expect(lifecycle.headers.get("allow")).toBe("POST, OPTIONS");
    const prices = await call("POST", "/v1/prices");
    expect(prices.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    // HEAD is GET without the body; a HEAD where only POST is taken is 405 too.
    expect((await call("HEAD", "/v1/prices")).status).toBe(200);
    const head = await call("HEAD", "/v1/counters");
    expect([head.status, head.headers.get("allow")]).toEqual([405, "POST, OPTIONS"]);
    // A plain OPTIONS is answered with Allow; a preflight is still CORS's (the test above).
    const options = await call("OPTIONS", "/v1/counters");
    expect([options.status, options.headers.get("allow"), options.headers.get("access-control-allow-origin")]).toEqual([
      204,
      "POST, OPTIONS",
      "*",
    ]);
    expect((await call("OPTIONS", "/v1/countres")).status).toBe(404);
  });

  it("an unknown path is 404 naming the known paths a typo away", async () => {
    const typo = await problemOf(await call("POST", "/v1/countres"), 404);
    expect(typo.detail).toBe("No route for POST /v1/countres: did you mean `/v1/counters`?");
    const id = "r_0000000000000000000000";
    const deeper = await problemOf(await call("POST", `/v1/countrs/${id}/incremnt`), 404);
    expect(deeper.detail).toBe(
      `No route for POST /v1/countrs/${id}/incremnt: did you mean \`/v1/counters/${id}/increment\`?`,
    );
    const slash = await problemOf(await call("GET", "/v1/prices/"), 404);
    expect(slash.detail).toBe("No route for GET /v1/prices/: did you mean `/v1/prices`?");
    const otherMethod = await problemOf(await call("POST", "/v1/price"), 404);
    expect(otherMethod.detail).toBe("No route for POST /v1/price: did you mean `/v1/prices` (GET)?");
    const far = await problemOf(await call("GET", "/v1/nothing-like-it"), 404);
    expect(far.detail).toBe(
      "No route for GET /v1/nothing-like-it. Every path is in /openapi.json (one kind's: " +
        "/openapi.json?kinds=counters; an index: /llms.txt).",
    );
    // A long junk path is refused as cheaply as a short one.
    expect((await call("GET", `/v1/${"x".repeat(4000)}`)).status).toBe(404);
  });

  it("an unknown field is reported at its own path, one error per field", async () => {
    const { token } = await buyCredits(1);
    const res = await call("POST", "/v1/counters", {
      body: { maximum: 10, ttl_secnds: 60 },
      headers: { authorization: `Bearer ${token}` },
    });
    const body = await problemOf(res, 422);
    expect(body.errors).toEqual([
      { path: "maximum", message: "is not a field here: remove it, or correct its spelling" },
      { path: "ttl_secnds", message: "is not a field here: remove it, or correct its spelling" },
    ]);
    expect(body.detail).toBe("maximum: is not a field here: remove it, or correct its spelling");
  });

  it("every type URI opens a page for its code: JSON for agents, HTML for browsers; unknown code is 404", async () => {
    for (const [code, [status, title, meaning, whatToDo]] of Object.entries(ERROR_CODES)) {
      const res = await call("GET", `/errors/${code}`);
      expect(res.status, code).toBe(200);
      expect(res.headers.get("vary")).toBe("Accept");
      expect(await json(res)).toEqual({
        type: `https://zeitvault.test/errors/${code}`,
        code,
        status,
        title,
        meaning,
        what_to_do: whatToDo,
      });
    }
    const typeUri = (await problemOf(await call("POST", "/v1/counters", { body: {} }), 402)).type;
    const page = await call("GET", new URL(typeUri).pathname, {
      headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'none'; style-src 'sha256-/);
    const html = await page.text();
    expect(html).toContain("<h1>Payment required</h1>");
    expect(html).toContain("<code>X-CREDIT-TOKEN</code>");
    const unknown = await problemOf(await call("GET", "/errors/no_such_code"), 404);
    expect(unknown.detail).toMatch(
      /^There is no error code "no_such_code"\. The codes are: invalid_request, unauthorized, /,
    );
    const doc = await json<OpenApiDocument>(await call("GET", "/openapi.json?kinds=all"));
    expect(doc.paths!["/errors/{code}"]!.get!.operationId).toBe("error_code");
  });
});

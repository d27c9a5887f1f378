/**
 * forms, per issue 14 and docs/kinds.md: the configured fields served as a page and checked on
 * submission (a 422 naming each wrong field for a script, the page again with the errors and
 * the values for a person), JSON from scripts, the honeypot (answered as taken, discarded), the
 * hourly share per client address (429 with Retry-After, counted), submissions listed, fetched,
 * deleted and exported, and relayed: a signed webhook event and a notify resource's message.
 * The page in a real browser, with an accessibility check: test/node/pages.test.ts.
 */
import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { forms } from "../../src/kinds/address/forms";
import { ORIGIN, buyCredits, call, createResource, managed, opsOn, publicUrl, received, verifierOf } from "../harness";

const receiver = env.TEST_RECEIVER_URL;
const unique = () => crypto.randomUUID().slice(0, 8);

const FIELDS = [
  { name: "name", label: "Your name", required: true, max_length: 40 },
  { name: "email", label: "E-mail", type: "email", required: true },
  { name: "topic", label: "Topic", type: "select", options: ["Sales", "Support"] },
  { name: "seats", label: "Seats", type: "number", min: 1, max: 500 },
  { name: "message", label: "Message", type: "textarea", required: true, max_length: 200 },
  { name: "agree", label: "I agree to be contacted", type: "checkbox", required: true },
];

async function form(extra: Record<string, unknown> = {}) {
  const { token } = await buyCredits(1);
  const created = await createResource("forms", token, {
    title: "Contact <us>",
    description: "We answer within a day.\nPromise.",
    fields: FIELDS,
    ...extra,
  });
  const address = new URL(publicUrl(created.record)).pathname;
  const post = (body: string | Record<string, unknown>, headers: Record<string, string> = {}) =>
    call("POST", address, {
      body,
      headers: {
        ...(typeof body === "string" ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        ...headers,
      },
    });
  return { ...created, token, address, post, ...opsOn(forms, created.id, created.mgmt, token) };
}

const GOOD = {
  name: "Ada",
  email: "ada@example.com",
  topic: "Sales",
  seats: 12,
  message: "Line one\nLine two",
  agree: true,
};
const browser = { accept: "text/html,application/xhtml+xml" };

describe("forms", () => {
  it("serves the page with every field labelled, and the fields as JSON to a script", async () => {
    const f = await form();
    const page = await call("GET", f.address, { headers: browser });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain("<h1>Contact &#60;us&#62;</h1>");
    for (const field of FIELDS) expect(html).toContain(`<label for="f-${field.name}">`);
    expect(html).toContain('name="website" tabindex="-1"');
    const described = await call("GET", f.address, { headers: { accept: "application/json" } });
    expect(((await described.json()) as { fields: { name: string }[] }).fields.map((x) => x.name)).toEqual(
      FIELDS.map((x) => x.name),
    );
  });

  it(
    "takes JSON from a script and a form post from a person; keeps, lists, fetches, deletes, exports; " +
      "relays a signed event",
    async () => {
      const hook = unique();
      const f = await form({ webhook_url: `${receiver}/ok/${hook}` });
      const res = await f.post(GOOD, { "cf-connecting-ip": "203.0.113.10", "user-agent": "script/1.0" });
      expect(res.status).toBe(201);
      const taken = (await res.json()) as { submission_id: string; received: boolean };
      expect(taken).toMatchObject({ received: true, submission_id: expect.stringMatching(/^sub_/) });

      const page = await f.post(
        new URLSearchParams({
          name: " Grace ",
          email: "grace@example.com",
          message: "Hi <there>",
          agree: "on",
          topic: "",
          seats: "",
        }).toString(),
        { ...browser, "cf-connecting-ip": "203.0.113.11" },
      );
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<p role="status" id="thanks">Thank you: your message was received.</p>');

      const list = await f.ok("list_submissions", "/submissions");
      expect(list.items.map((s) => s.data)).toEqual([
        { name: "Grace", email: "grace@example.com", topic: null, seats: null, message: "Hi <there>", agree: true },
        {
          name: "Ada",
          email: "ada@example.com",
          topic: "Sales",
          seats: 12,
          message: "Line one\nLine two",
          agree: true,
        },
      ]);
      expect(list.items[1]).toMatchObject({ client_ip: "203.0.113.10", user_agent: "script/1.0" });
      expect(await f.ok("get_submission", `/submissions/${taken.submission_id}`)).toMatchObject({
        seq: 1,
        data: { name: "Ada" },
      });

      const [event] = await received(hook, 1);
      const verified = verifierOf(f.record).verify(event!.body, event!.headers) as {
        type: string;
        data: { submission_id: string; data: unknown };
      };
      expect(verified).toMatchObject({
        type: "forms.submission",
        data: { submission_id: taken.submission_id, data: { name: "Ada", seats: 12 } },
      });

      await f.ok("delete_submission", `/submissions/${taken.submission_id}`);
      expect((await f.refused("get_submission", `/submissions/${taken.submission_id}`)).status).toBe(404);
      const exported = (await (
        await call("GET", `/v1/resources/${f.id}/export`, { headers: managed(f.mgmt) })
      ).json()) as { data: { submissions: unknown[] } };
      expect(exported.data.submissions).toHaveLength(1);
    },
  );

  it("sends a person to redirect_url (303) after a submission", async () => {
    const f = await form({ redirect_url: "https://example.com/thanks" });
    const res = await SELF.fetch(`${ORIGIN}${f.address}`, {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams({ name: "A", email: "a@example.com", message: "m", agree: "on" }),
      headers: { ...browser, "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("https://example.com/thanks");
  });

  it("answers a filled honeypot as if it took it, and keeps nothing", async () => {
    const f = await form();
    const bot = await f.post(
      new URLSearchParams({
        name: "Bot",
        email: "bot@example.com",
        message: "buy",
        agree: "on",
        website: "http://spam.example",
      }).toString(),
      browser,
    );
    expect(bot.status).toBe(200);
    expect(await bot.text()).toContain("Thank you: your message was received.");
    const script = await f.post({ ...GOOD, website: "x" });
    expect(script.status).toBe(201);
    expect(await f.ok("info", "")).toEqual({ submissions: 0, spam: 2, rate_limited: 0 });
  });

  it("refuses what doesn't fit, naming each field: 422 for scripts, the page again for people; none kept", async () => {
    const f = await form();
    const wrong = async (body: Record<string, unknown>, path: string, message: RegExp) => {
      const res = await f.post(body);
      const problem = (await res.json()) as { status: number; errors: { path: string; message: string }[] };
      expect(res.status, JSON.stringify(problem)).toBe(422);
      expect(problem.errors.find((e) => e.path === path)?.message).toMatch(message);
    };
    await wrong({ ...GOOD, name: undefined }, "name", /is required/);
    await wrong({ ...GOOD, email: "not-an-address" }, "email", /e-mail address/);
    await wrong({ ...GOOD, seats: 0 }, "seats", /at least 1/);
    await wrong({ ...GOOD, seats: "many" }, "seats", /a number/);
    await wrong({ ...GOOD, topic: "Other" }, "topic", /one of the choices/);
    await wrong({ ...GOOD, agree: false }, "agree", /must be checked/);
    await wrong({ ...GOOD, name: "x".repeat(41) }, "name", /at most 40/);
    await wrong({ ...GOOD, name: "two\nlines" }, "name", /one line/);
    await wrong({ ...GOOD, message: "nul\u0000byte" }, "message", /control characters/);
    await wrong({ ...GOOD, extra: "?" }, "extra", /not a field/);
    expect((await f.post({ ...GOOD, name: { nested: true } })).status).toBe(400);
    expect((await f.post("{not json", { "content-type": "application/json" })).status).toBe(400);
    expect((await f.post("<xml/>", { "content-type": "application/xml" })).status).toBe(415);
    expect((await f.post("name=a&name=b")).status).toBe(400);
    expect((await f.post({ ...GOOD, message: "x".repeat(70_000) })).status).toBe(413);

    const page = await f.post(
      new URLSearchParams({ name: "<b>Ada</b>", email: "nope", message: "", agree: "on" }).toString(),
      browser,
    );
    expect(page.status).toBe(422);
    const html = await page.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain('<a href="#f-email">E-mail must be an e-mail address</a>');
    expect(html).toContain('aria-invalid="true" maxlength="254" autocomplete="email" value="nope"');
    expect(html).toContain('value="&#60;b&#62;Ada&#60;/b&#62;"');
    expect(await f.ok("info", "")).toEqual({ submissions: 0, spam: 0, rate_limited: 0 });
  });

  it("takes at most max_per_ip_per_hour from one address (429 with Retry-After), counting the refusals", async () => {
    const f = await form({ max_per_ip_per_hour: 2 });
    const from = (ip: string) => ({ "cf-connecting-ip": ip });
    expect((await f.post(GOOD, from("198.51.100.1"))).status).toBe(201);
    expect((await f.post(GOOD, from("198.51.100.1"))).status).toBe(201);
    const third = await f.post(GOOD, from("198.51.100.1"));
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(third.headers.get("content-type")).toContain("application/problem+json");
    const page = await f.post(
      new URLSearchParams({ name: "A", email: "a@example.com", message: "m", agree: "on" }).toString(),
      { ...browser, ...from("198.51.100.1") },
    );
    expect(page.status).toBe(429);
    expect(await page.text()).toContain("Too many submissions came from your network this hour");
    expect((await f.post(GOOD, from("198.51.100.2"))).status).toBe(201);
    expect(await f.ok("info", "")).toEqual({ submissions: 3, spam: 0, rate_limited: 2 });
  });

  it("relays each submission to a notify resource's people", async () => {
    const tag = unique();
    const { token } = await buyCredits(1);
    const n = await createResource("notify", token, {
      channels: [`json://${new URL(receiver).host}/ok/forms-notify-${tag}`],
    });
    const f = await form({ notify: n.mgmt });
    expect(f.record.config).toMatchObject({ notify: n.id });
    expect((await f.post(GOOD)).status).toBe(201);
    const [hit] = await received(`forms-notify-${tag}`, 1);
    expect(JSON.parse(hit!.body)).toMatchObject({
      title: "New submission: Contact <us>",
      message:
        "Your name: Ada\nE-mail: ada@example.com\nTopic: Sales\nSeats: 12\nMessage: Line one\nLine two\nI " +
        "agree to be contacted: yes",
    });
  });

  it("refuses a form it could not serve, before charging", async () => {
    const { token } = await buyCredits(1);
    const refused = async (body: Record<string, unknown>, path: RegExp) => {
      const res = await call("POST", "/v1/forms", {
        body: { title: "T", fields: [{ name: "a", label: "A" }], ...body },
        headers: { authorization: `Bearer ${token}` },
      });
      const problem = (await res.json()) as { errors: { path: string }[] };
      expect(res.status, JSON.stringify(problem)).toBe(422);
      expect(problem.errors.map((e) => e.path).join(" ")).toMatch(path);
    };
    await refused({ fields: [] }, /fields/);
    await refused(
      {
        fields: [
          { name: "a", label: "A" },
          { name: "a", label: "B" },
        ],
      },
      /fields/,
    );
    await refused({ fields: [{ name: "topic", label: "T", type: "select" }] }, /options/);
    await refused({ fields: [{ name: "a", label: "A", options: ["x"] }] }, /options/);
    await refused({ fields: [{ name: "website", label: "W" }] }, /name/);
    await refused({ fields: [{ name: "Bad Name", label: "B" }] }, /name/);
    await refused({ fields: [{ name: "n", label: "N", type: "number", min: 5, max: 1 }] }, /min/);
    await refused({ fields: [{ name: "a", label: "line\nbreak" }] }, /label/);
    await refused({ redirect_url: "javascript:alert(1)" }, /redirect_url/);
    await refused({ notify: "zvm_forged" }, /notify/);
    await refused({ surprise: true }, /.*/);
  });
});

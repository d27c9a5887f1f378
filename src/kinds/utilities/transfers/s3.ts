/**
 * The S3 calls a transfer makes, signed with SigV4 by aws4fetch: HEAD, a ranged GET, PutObject,
 * and the multipart upload (Create, UploadPart, Complete, Abort). Bodies stream with their length
 * known (FixedLengthStream) and are signed as UNSIGNED-PAYLOAD, as S3 allows over TLS, so no part
 * is held whole to be hashed first. The endpoint passes the egress guard.
 */
import { AwsV4Signer } from "aws4fetch";
import { allowsPrivateTargets, checkEgressUrl } from "../../../delivery/egress-guard";
import type { Env } from "../../../env";
import { AppError } from "../../../http/errors";
import type { s3Endpoint } from "./schema";
import type { z } from "@hono/zod-openapi";

export type S3Target = z.infer<typeof s3Endpoint>;

const TIMEOUT_MS = 60_000;

/**
 * The object's URL, path-style (`endpoint/bucket/key`) or virtual-hosted (`bucket.endpoint/key`); each key segment
 * percent-encoded as SigV4 wants.
 */
export function objectUrl(env: Env, t: S3Target, field: string): URL {
  const base = checkEgressUrl(t.endpoint, allowsPrivateTargets(env.ALLOW_PRIVATE_TARGETS), `${field}.endpoint`);
  const key = t.key
    .split("/")
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join("/");
  const path = base.pathname.replace(/\/+$/, "");
  return t.path_style
    ? new URL(`${base.origin}${path}/${t.bucket}/${key}`)
    : new URL(`${base.protocol}//${t.bucket}.${base.host}${path}/${key}`);
}

/** What an S3 error body says (`<Code>…</Code><Message>…</Message>`), for the transfer's error. */
async function s3Error(res: Response, what: string, field: string): Promise<AppError> {
  const text = await res.text().catch(() => "");
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
  const said = `${what}: S3 answered ${res.status}${code ? ` ${code}` : ""}${message ? ` (${message})` : ""}`;
  // The caller's side (no such bucket or key, credentials refused) is theirs to fix: 422 naming the endpoint; the
  // store's own failures are 502.
  if (res.status >= 400 && res.status < 500)
    return new AppError("validation_failed", `${field}: ${said}.`, { errors: [{ path: field, message: said }] });
  return new AppError("upstream_failed", `${said}.`);
}

export class S3Client {
  private readonly url: URL;

  constructor(
    env: Env,
    private readonly t: S3Target,
    private readonly field: string,
  ) {
    this.url = objectUrl(env, t, field);
  }

  private async send(
    method: string,
    query: Record<string, string>,
    init: { headers?: Record<string, string>; body?: BodyInit | null } = {},
  ): Promise<Response> {
    const url = new URL(this.url);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const body = init.body ?? undefined;
    const signer = new AwsV4Signer({
      url: url.href,
      method,
      service: "s3",
      region: this.t.region,
      accessKeyId: this.t.access_key_id,
      secretAccessKey: this.t.secret_access_key,
      sessionToken: this.t.session_token,
      headers: {
        ...init.headers,
        ...(typeof body === "string" || body === undefined ? {} : { "x-amz-content-sha256": "UNSIGNED-PAYLOAD" }),
      },
      body: typeof body === "string" || body === undefined ? body : undefined,
    });
    const signed = await signer.sign();
    try {
      return await fetch(signed.url, {
        method,
        headers: signed.headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new AppError(
        "upstream_failed",
        `${this.field}: S3 could not be reached (${err instanceof Error ? err.message : String(err)}).`,
      );
    }
  }

  /** Size, ETag and type of the object, or a 422 (no such object, refused) / 502. */
  async head(): Promise<{ size: number; etag: string | null; contentType: string | null }> {
    const res = await this.send("HEAD", {});
    if (!res.ok) throw await s3Error(res, `HEAD ${this.t.bucket}/${this.t.key}`, this.field);
    return {
      size: Number(res.headers.get("content-length") ?? "0"),
      etag: res.headers.get("etag"),
      contentType: res.headers.get("content-type"),
    };
  }

  /** Bytes `start` to `end` inclusive, streaming. */
  async range(start: number, end: number): Promise<ReadableStream<Uint8Array>> {
    const res = await this.send("GET", {}, { headers: { range: `bytes=${start}-${end}` } });
    if (res.status !== 206 && !(res.status === 200 && start === 0))
      throw await s3Error(res, `GET ${this.t.bucket}/${this.t.key} bytes ${start}-${end}`, this.field);
    if (!res.body) throw new AppError("upstream_failed", `${this.field}: S3 sent no body.`);
    return res.body;
  }

  async put(body: ReadableStream<Uint8Array> | Uint8Array, contentType: string): Promise<string | null> {
    const res = await this.send("PUT", {}, { headers: { "content-type": contentType }, body });
    if (!res.ok) throw await s3Error(res, `PUT ${this.t.bucket}/${this.t.key}`, this.field);
    return res.headers.get("etag");
  }

  async createUpload(contentType: string): Promise<string> {
    const res = await this.send("POST", { uploads: "" }, { headers: { "content-type": contentType }, body: "" });
    if (!res.ok) throw await s3Error(res, `CreateMultipartUpload ${this.t.bucket}/${this.t.key}`, this.field);
    const id = /<UploadId>([^<]+)<\/UploadId>/.exec(await res.text())?.[1];
    if (!id)
      throw new AppError("upstream_failed", `${this.field}: S3 answered CreateMultipartUpload without an UploadId.`);
    return id;
  }

  async uploadPart(uploadId: string, partNumber: number, body: ReadableStream<Uint8Array>): Promise<string> {
    const res = await this.send("PUT", { partNumber: String(partNumber), uploadId }, { body });
    if (!res.ok) throw await s3Error(res, `UploadPart ${partNumber}`, this.field);
    const etag = res.headers.get("etag");
    if (!etag)
      throw new AppError("upstream_failed", `${this.field}: S3 answered UploadPart ${partNumber} without an ETag.`);
    return etag;
  }

  /**
   * Completes the upload; answers the object's ETag. `null` when S3 no longer knows the upload (completed already, or
   * aborted).
   */
  async complete(uploadId: string, parts: { part_number: number; etag: string }[]): Promise<string | null> {
    const list = parts
      .map((p) => `<Part><PartNumber>${p.part_number}</PartNumber><ETag>${escapeXml(p.etag)}</ETag></Part>`)
      .join("");
    const xml = `<CompleteMultipartUpload>${list}</CompleteMultipartUpload>`;
    const res = await this.send("POST", { uploadId }, { headers: { "content-type": "application/xml" }, body: xml });
    const text = await res.text();
    if (res.status === 404 && text.includes("NoSuchUpload")) return null;
    // S3 may answer 200 with an error in the body (RFC-less, but documented): read the body, not only the status.
    if (!res.ok || text.includes("<Error>"))
      throw await s3Error(
        new Response(text, { status: res.ok ? 500 : res.status }),
        "CompleteMultipartUpload",
        this.field,
      );
    return /<ETag>([^<]+)<\/ETag>/.exec(text)?.[1]?.replace(/&quot;/g, '"') ?? null;
  }

  async abort(uploadId: string): Promise<void> {
    const res = await this.send("DELETE", { uploadId });
    if (!res.ok && res.status !== 404) throw await s3Error(res, "AbortMultipartUpload", this.field);
  }
}

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

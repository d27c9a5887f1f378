/**
 * vitest globalSetup (Node): the local S3-compatible server (s3rver behind a SigV4-checking front) for the transfer
 * tests.
 */
import type { TestProject } from "vitest/node";
import { S3_ACCESS_KEY, S3_BUCKET, S3_SECRET_KEY, startS3 } from "./s3";

declare module "vitest" {
  export interface ProvidedContext {
    s3: { endpoint: string; controlUrl: string; bucket: string; accessKeyId: string; secretAccessKey: string };
  }
}

export default async function setup(project: TestProject) {
  const s3 = await startS3();
  project.provide("s3", {
    endpoint: s3.endpoint,
    controlUrl: s3.controlUrl,
    bucket: S3_BUCKET,
    accessKeyId: S3_ACCESS_KEY,
    secretAccessKey: S3_SECRET_KEY,
  });
  return s3.stop;
}

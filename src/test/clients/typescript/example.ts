// The example of docs/api.md ("Generating a client"), compiled by check.sh against the
// typescript-fetch client generated from docs/openapi.json. The method names are the
// document's operationIds; the payloads and answers are its schemas.
import {
  Configuration,
  JobsApi,
  KindsApi,
  ProblemFromJSON,
  ResponseError,
  type Job,
  type Problem,
} from "./client";

const config = new Configuration({
  basePath: "http://127.0.0.1:8080",
  accessToken: async () => process.env.JOBS_TOKEN ?? "",
});
const kinds = new KindsApi(config);
const jobs = new JobsApi(config);

// Enqueue a zip job; the same Idempotency-Key again returns the same job.
async function enqueue(): Promise<string> {
  const enqueued = await kinds.enqueueZip({
    zipPayload: { paths: ["reports/"], name: "reports.zip" },
    idempotencyKey: "nightly-reports-2026-12-06",
  });
  return enqueued.uid;
}

// Follow the status until the job is done or failed (or use the event stream, /events).
async function follow(uid: string): Promise<Job> {
  for (;;) {
    const job = await jobs.getJob({ uid });
    if (job.status === "done" || job.status === "failed") {
      return job;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// Download the file, as a Blob.
async function download(uid: string): Promise<Uint8Array> {
  const file = await jobs.downloadJobFile({ uid });
  return new Uint8Array(await file.arrayBuffer());
}

// A refusal throws ResponseError; its body is an application/problem+json Problem.
async function problemOf(error: unknown): Promise<Problem | undefined> {
  if (error instanceof ResponseError) {
    return ProblemFromJSON(await error.response.json());
  }
  return undefined;
}

async function main(): Promise<void> {
  try {
    const uid = await enqueue();
    const job = await follow(uid);
    if (job.status === "failed") {
      throw new Error(`job ${uid} failed: ${job.error}`);
    }
    const bytes = await download(uid);
    console.log(`${job.preferredName}: ${bytes.length} bytes`);
  } catch (error) {
    const problem = await problemOf(error);
    if (!problem) {
      throw error;
    }
    // e.g. 404 urn:async-jobs:problem:not-found, 400 with the refused field in detail
    console.error(`${problem.status} ${problem.type}: ${problem.detail}`);
    process.exitCode = 1;
  }
}

void main();

// graphile-worker under bench/peers/harness.mjs. Settings from the library's performance page:
// concurrentJobs 10, a pool of 12 connections (its advice: 10 or concurrency + 2, whichever is
// larger), a local queue that fetches and locks 500 jobs at once, and completions batched
// (completeJobBatchDelay 0, failJobBatchDelay 0). New jobs wake the worker through the NOTIFY that
// graphile-worker's own insert sends; pollInterval stays at its default of 2 s.
import pg from "pg";
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import { serve } from "../harness.mjs";

const connectionString = process.env.BENCH_PEERS_DATABASE_URL;
const schema = "graphile_worker";
// Warnings and errors only; graphile-worker logs every start and stop at info.
const logger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning") console.error(`graphile-worker ${level}: ${message}`);
});
const probe = new pg.Client({ connectionString });
await probe.connect();
let utils = null;

const peer = {
  async fresh() {
    if (utils) await utils.release();
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    utils = await makeWorkerUtils({ connectionString, schema, logger });
    await utils.migrate();
  },
  enqueue: (i) => utils.addJob("noop", { i }),
  enqueueBatch: (from, count) =>
    utils.addJobs(Array.from({ length: count }, (_, k) => ({ identifier: "noop", payload: { i: from + k } }))),
  async startWorker(started) {
    const runner = await run({
      noHandleSignals: true,
      logger,
      taskList: {
        noop: async (payload) => {
          started(payload.i);
        },
      },
      preset: {
        worker: {
          connectionString,
          schema,
          concurrentJobs: 10,
          maxPoolSize: 12,
          localQueue: { size: 500 },
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
        },
      },
    });
    return () => runner.stop();
  },
  async unfinished() {
    const r = await probe.query(`SELECT 1 FROM ${schema}._private_jobs LIMIT 1`);
    return r.rowCount > 0;
  },
};

await serve("graphile-worker", peer);
if (utils) await utils.release();
await probe.end();

// pg-boss under bench/peers/harness.mjs, as two systems: "pg-boss", polling only, and, with
// --notify, "pg-boss+notify", with the LISTEN/NOTIFY wake-up (useListenNotify on the instance,
// notify on the queue). The worker follows the library's advice for throughput: one worker that
// fetches batches of 10 and runs them at once (batchSize 10, concurrency 10 in all), fetching again
// at once while batches come back full (burstWhenBatchFull), and otherwise every 0.5 s, the
// shortest interval pg-boss allows (pollingIntervalSeconds 0.5; the default is 2 s). The pool
// keeps its default of 10 connections.
import pg from "pg";
import { PgBoss } from "pg-boss";
import { serve } from "../harness.mjs";

const notify = process.argv.includes("--notify");
const system = notify ? "pg-boss+notify" : "pg-boss";
const connectionString = process.env.BENCH_PEERS_DATABASE_URL;
const schema = "pgboss";
const queue = "noop";
const probe = new pg.Client({ connectionString });
await probe.connect();
let boss = null;

const peer = {
  async fresh() {
    if (boss) await boss.stop({ graceful: true });
    await probe.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    boss = new PgBoss({ connectionString, schema, useListenNotify: notify });
    boss.on("error", (e) => console.error(`${system} error: ${e.message}`));
    await boss.start();
    await boss.createQueue(queue, { notify });
  },
  enqueue: (i) => boss.send(queue, { i }),
  enqueueBatch: (from, count) =>
    boss.insert(queue, Array.from({ length: count }, (_, k) => ({ data: { i: from + k } }))),
  async startWorker(started) {
    await boss.work(
      queue,
      { batchSize: 10, localConcurrency: 1, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 },
      async (jobs) => {
        await Promise.all(jobs.map(async (job) => started(job.data.i)));
      },
    );
    return () => boss.offWork(queue);
  },
  async unfinished() {
    const r = await probe.query(`SELECT 1 FROM ${schema}.job WHERE name = $1 AND state < 'completed' LIMIT 1`, [queue]);
    return r.rowCount > 0;
  },
};

// Without NOTIFY a new job waits for the next poll, so pickups are spread over a whole interval.
await serve(system, peer, { spreadMs: notify ? 50 : 500 });
if (boss) await boss.stop({ graceful: true });
await probe.end();

// The peers suite's measures for the Node drivers (graphile-worker, pg-boss), run exactly as
// src/test/java/io/asyncjobs/bench/peers/PeerHarness.java runs them for ours and db-scheduler.
//
// A driver hands serve() a peer with these methods, and the harness times them:
//   fresh()                    an empty queue: its schema dropped and made again, no worker running
//   enqueue(i)                 one no-op job with payload {i}, resolved once it is committed
//   enqueueBatch(from, count)  jobs from .. from + count - 1 in one call of the library's batch API
//   startWorker(started)       a worker at concurrency 10 whose handler calls started(i) first and
//                              then returns; resolves to an async function that stops the worker
//   unfinished()               whether any job is still waiting or running
//
// The control protocol, which bench/peers.sh drives: the driver touches <control>/<system>.ready,
// then waits for <control>/<system>.run. That file holds a round number (run the warm-up and the
// four measures, append one JSON line per figure to the output file, then touch
// <control>/<system>.done-<round>) or "quit". Before the first round it runs, a system drains
// BENCH_PEERS_WARMUP_DRAINS times unmeasured. A failed round leaves <system>.failed-<round> with the
// error, and the driver exits.

import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const env = (name, fallback) => Number(process.env[name] ?? fallback);

/** The sizes and bounds of one round; BENCH_PEERS_* variables change them. */
export function settings() {
  return {
    jobs: env("BENCH_PEERS_JOBS", 10000),
    batch: env("BENCH_PEERS_BATCH", 1000),
    pickups: env("BENCH_PEERS_PICKUPS", 200),
    enqueueSeconds: env("BENCH_PEERS_ENQUEUE_SECONDS", 15),
    drainSeconds: env("BENCH_PEERS_DRAIN_SECONDS", 60),
    pickupSeconds: env("BENCH_PEERS_PICKUP_SECONDS", 20),
    warmup: env("BENCH_PEERS_WARMUP", 3000),
    warmupDrains: env("BENCH_PEERS_WARMUP_DRAINS", 20),
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// The promise's value, or `late` once `ms` have passed; the timer does not outlive the race, so
// that a driver told to quit exits at once.
async function within(promise, ms, late) {
  let timer;
  const bound = new Promise((resolve) => (timer = setTimeout(() => resolve(late), ms)));
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}
const seconds = (t0) => (performance.now() - t0) / 1000;

async function enqueueOneAtATime(peer, jobs, boundSeconds) {
  await peer.fresh();
  const t0 = performance.now();
  let i = 0;
  while (i < jobs && seconds(t0) < boundSeconds) {
    await peer.enqueue(i++);
  }
  return { value: i / seconds(t0), jobs: i };
}

async function enqueueBatches(peer, jobs, batch) {
  await peer.fresh();
  const t0 = performance.now();
  for (let from = 0; from < jobs; from += batch) {
    await peer.enqueueBatch(from, Math.min(batch, jobs - from));
  }
  return { value: jobs / seconds(t0), jobs };
}

// Jobs enqueued (untimed) before any worker runs; timed from the worker's start until the handler
// has run for every job and the database holds none unfinished.
async function drain(peer, jobs, batch, boundSeconds) {
  await peer.fresh();
  for (let from = 0; from < jobs; from += batch) {
    await peer.enqueueBatch(from, Math.min(batch, jobs - from));
  }
  let handled = 0;
  let allHandled;
  const everyJob = new Promise((resolve) => (allHandled = resolve));
  const t0 = performance.now();
  const stop = await peer.startWorker(() => {
    if (++handled === jobs) allHandled();
  });
  let complete = true;
  let elapsed;
  try {
    if ((await within(everyJob, boundSeconds * 1000, "late")) === "late") complete = false;
    while (complete && (await peer.unfinished())) {
      if (seconds(t0) > boundSeconds) complete = false;
      else await sleep(1);
    }
    elapsed = seconds(t0);
  } finally {
    await stop();
  }
  return { value: handled / elapsed, jobs, complete };
}

// Single jobs into an idle queue, from the enqueue call's return to the handler's start, each
// after a random pause of 5 ms plus up to `spreadMs`, so that arrivals do not fall into step with
// a polling loop.
async function pickups(peer, count, boundSeconds, spreadMs) {
  await peer.fresh();
  const waiting = new Map();
  const stop = await peer.startWorker((i) => {
    const w = waiting.get(i);
    if (w) w.resolve(performance.now());
  });
  const latencies = [];
  try {
    const t0 = performance.now();
    for (let k = 0; k < count && seconds(t0) < boundSeconds; k++) {
      let resolve;
      const started = new Promise((r) => (resolve = r));
      waiting.set(k, { resolve });
      await peer.enqueue(k);
      const returned = performance.now();
      const at = await within(started, 10000, null);
      if (at === null) throw new Error(`pickup ${k} did not start within 10 s`);
      latencies.push(at - returned);
      waiting.delete(k);
      await sleep(5 + Math.random() * spreadMs);
    }
  } finally {
    await stop();
  }
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.max(0, Math.ceil((p / 100) * latencies.length) - 1)];
  return { p50: pct(50), p99: pct(99), samples: latencies.length };
}

async function measureAll(peer, s, spreadMs) {
  const one = await enqueueOneAtATime(peer, s.jobs, s.enqueueSeconds);
  const batches = await enqueueBatches(peer, s.jobs, s.batch);
  const drained = await drain(peer, s.jobs, s.batch, s.drainSeconds);
  const picked = await pickups(peer, s.pickups, s.pickupSeconds, spreadMs);
  return [
    { measure: "enqueue_one_at_a_time", value: one.value, unit: "jobs/s", jobs: one.jobs },
    { measure: `enqueue_batches_of_${s.batch}`, value: batches.value, unit: "jobs/s", jobs: batches.jobs },
    { measure: "drain_concurrency_10", value: drained.value, unit: "jobs/s", jobs: drained.jobs, complete: drained.complete },
    { measure: "pickup_p50", value: picked.p50, unit: "ms", samples: picked.samples },
    { measure: "pickup_p99", value: picked.p99, unit: "ms", samples: picked.samples },
  ];
}

/**
 * Runs rounds on command until told to quit. `spreadMs` is the spread of the pauses between
 * pickups: at least the peer's polling interval when it polls.
 */
export async function serve(system, peer, { spreadMs = 50 } = {}) {
  const control = process.env.BENCH_PEERS_CONTROL;
  const output = process.env.BENCH_PEERS_OUTPUT;
  if (!control || !output) throw new Error("BENCH_PEERS_CONTROL and BENCH_PEERS_OUTPUT must be set");
  const s = settings();
  const warm = { ...s, jobs: s.warmup, batch: Math.min(s.batch, s.warmup), pickups: 20, warmupDrains: 0 };
  const command = join(control, `${system}.run`);
  let warmedUp = false;
  writeFileSync(join(control, `${system}.ready`), "");
  for (;;) {
    if (!existsSync(command)) {
      await sleep(50);
      continue;
    }
    const round = readFileSync(command, "utf8").trim();
    rmSync(command);
    if (round === "quit") return;
    try {
      if (!warmedUp) {
        // Unmeasured, every system alike: a JIT compiler took 15-31 drains of 10,000 to settle
        // (engine suite, 2026-12-07), and what the suite compares is replicas that have run.
        for (let k = 1; k <= s.warmupDrains; k++) {
          const d = await drain(peer, s.jobs, s.batch, s.drainSeconds);
          console.log(`${system} warm-up drain ${k}: ${Math.round(d.value)} jobs/s`);
        }
        warmedUp = true;
      }
      await measureAll(peer, warm, spreadMs); // unmeasured: JIT, pools and prepared statements
      const rows = await measureAll(peer, s, spreadMs);
      for (const row of rows) {
        const line = { system, round: Number(round), ...row, value: Math.round(row.value * 100) / 100 };
        appendFileSync(output, JSON.stringify(line) + "\n");
      }
      writeFileSync(join(control, `${system}.done-${round}`), "");
    } catch (e) {
      writeFileSync(join(control, `${system}.failed-${round}`), String(e?.stack ?? e));
      throw e;
    }
  }
}

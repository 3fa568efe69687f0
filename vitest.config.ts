import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { perfProject } from './src/plugin/index.ts'

// Node's compile cache for every process and thread the tests start (simulators, commands, load threads), as the
// command's bin sets it for its own: a simulator started in 0.46 CPU-s, 0.35 from the cache, and CI starts ~160
process.env['NODE_COMPILE_CACHE'] ??= join(tmpdir(), 'node-compile-cache')

/**
 * Test files judged by timing: see the unit-timing project. Each keeps its 2-core machine ~20 % busy (calibrate at 2×:
 * 19 s of CPU in 59 s), so three at a time; the CPU-heavy unit files run before them. Longest first (seconds on CI's
 * machine), the order they run in (LongestFirst).
 */
const TIMING = [
  // the history gate's series (40 runs at speed 1, 40 at 4 for SQLite and PostgreSQL, a CLI run judged), 98 s on CI:
  // the longest, so first (fifth, it ran on one worker for a minute after the other had finished)
  'test/history.test.ts',
  // what bench_serving's flags mean, judged by latency, 60–85 s (the refusals run with the unit files: refusals.test.ts)
  'test/bench-serving-meanings.test.ts',
  // capacity searches and sweeps from the shell, 46 s: a step sent late is invalid, and a search of invalid steps stops
  'test/command-line.test.ts',
  'test/capacity.test.ts',
  'test/client-ttft-and-search-start.test.ts',
  'test/server-metrics.test.ts',
  // Ctrl-C and the folders that searches and sweeps own (the other inputs' tests run with the unit files), 20 s
  'test/interrupts-and-folders.test.ts',
  'test/sim-router.test.ts',
  // a used llama.cpp-like server's TTFT against the model's, within 10–20 %: beside three unit files (a perf project
  // run as a subprocess among them) a prefill read 1.20× what the model says
  'test/unified-kv-cache.test.ts',
  // closed-loop users: each request sent its think time after an answer, within 50 ms (a timer fired 66 ms late with
  // three unit files at once on CI's two cores), 3 s
  'test/users.test.ts',
]
/**
 * Judged by timing, and alone: calibrate's held-out TTFT p50 within 15 % of the hidden server's, 43 requests a
 * point (10 s). Beside bench-serving-meanings' capacity search it read +10, +14 and +19 % while the client's and the
 * simulator's own overhead was counted twice; taken off (calibrate measures it), −1.8, +9.5 and +9.1 % — still too
 * near 15 % to share the machine.
 * Session 32, the overhead measured on a sleeping worker and the calibrated one warmed: beside it +7.2 and +8.5 % at
 * the first point, +6.1 and −1.7 % at the second (two runs), where alone they read −0.6 to +6.5 %: still alone, for
 * the ~30 s it would save. Session 52, its held-out points now side by side on the server and the simulator, it ran
 * first among the timing files: its held-out errors held within 4 % beside them, with one busy loop and with two, but
 * with two its steadiness probe (the server against itself, 2 streams) read a spread of 0.52 against the 0.2 it must
 * stay under (0.007 beside the files alone, 0.012 with one busy loop). On CI's slower machine, where the timing files
 * keep it 64-100 % busy, that is a flake waiting: alone still, ~57 s of CI's time.
 */
const ALONE = ['test/calibrate.test.ts']
/**
 * Studies that run alone: the capacity study's searches must find exactly 2× from speed 4 to 8. routing-policies once
 * ran alone too (p99s that beside the calibrated cluster read cache_aware 81.1 ms against random's 77.9); it compares
 * TTFT p50s 3× apart now, and runs beside the calibrated cluster, whose worker had ~26 s free there.
 */
const ALONE_STUDIES = ['studies/capacity.study.ts']
/**
 * Files that run side by side, longest first: without the durations of an earlier run (a clean clone, CI) Vitest starts
 * the largest files first, and there bench-serving-meanings' 60 s file started a minute into unit-timing's pairs, and the 45 s
 * calibrated-cluster study after two short ones. A project's files in its list's order, the rest after them.
 */
const LONGEST_FIRST: Record<string, string[]> = {
  // seconds on a clean clone's CI (b94b701): csv-streaming (42 s) and invalid-runs (20 s) were the last two to start
  unit: [
    'test/tarball.test.ts', // 77
    'test/orphans.test.ts', // 52
    'test/csv-streaming.test.ts', // 42
    'test/reasoning.test.ts', // 38
    'test/html-report.test.ts', // 36
    'test/inputs-and-errors.test.ts', // 33
    'test/secrets-and-hangs.test.ts', // 32
    'test/client-failures.test.ts', // 31
    'test/hostile-streams.test.ts', // 23
    'test/trace-replay.test.ts', // 22
    'test/shards.test.ts', // 21
    'test/invalid-runs.test.ts', // 20
  ],
  'unit-timing': TIMING,
  'perf-long': ['studies/calibrated-cluster.study.ts'],
}
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (f: TestSpecification): number => {
      const i = (LONGEST_FIRST[f.project.name] ?? []).findIndex((t) => f.moduleId.endsWith(t))
      return i === -1 ? Number.POSITIVE_INFINITY : i
    }
    // within each project, in rank order (a stable sort keeps Vitest's order among the unranked)
    const byProject = new Map<string, TestSpecification[]>()
    for (const f of sorted) {
      const list = byProject.get(f.project.name)
      if (list === undefined) byProject.set(f.project.name, [f])
      else list.push(f)
    }
    for (const list of byProject.values()) list.sort((a, b) => rank(a) - rank(b))
    const next = new Map([...byProject].map(([name, list]) => [name, list.values()]))
    return sorted.map((f) => next.get(f.project.name)?.next().value as TestSpecification)
  }
}

type Project = ReturnType<typeof perfProject>

/** A perf project whose files run two at a time (less `exclude`). */
const twoAtATime = (p: Project, exclude: string[]): Project => ({
  ...p,
  test: { ...p.test, maxWorkers: 2, fileParallelism: true, exclude: [...configDefaults.exclude, ...exclude] },
})

/** A perf project that runs after the others, with the machine to itself. */
const alone = (p: Project): Project => ({
  ...p,
  test: { ...p.test, sequence: { ...p.test?.sequence, groupOrder: (p.test?.sequence?.groupOrder ?? 100) + 1 } },
})

const src = (p: string): string => fileURLToPath(new URL(`./src/${p}`, import.meta.url))

export default defineConfig({
  // The perf suites import the package by name, as a user's would; here that name is this source tree.
  resolve: { alias: { 'vitest-llm-perf/plugin': src('plugin/index.ts'), 'vitest-llm-perf': src('index.ts') } },
  test: {
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...TIMING, ...ALONE],
          // most tests wait on servers and sockets, not the CPU (one file at a time kept a 2-core machine ~30 %
          // busy; three ~59 %): four files at once. Four once failed worker-link's one-write test (session 26);
          // session 30: that test passed 8 of 8 beside three CPU hogs on two cores, and a clean-clone CI at four
          // ran npm test in 397 s against 423 at three
          maxWorkers: 4,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      // the tests whose verdicts are latencies the simulator and the client produce (a capacity found, a router's
      // spread over threads, a run judged valid): after the others, three files at a time, then one alone. Three once
      // failed a clean-clone CI (a run at 40 req/s sent late: dispatch lag p99 42 ms > 25) where two passed; since
      // the compile cache (a simulator's start 0.46 → 0.35 CPU-s) three keep the 2 cores ~73 % busy, and ran the
      // files in 131-133 s where two took ~200 (session 37)
      {
        extends: true,
        test: {
          name: 'unit-timing',
          include: TIMING,
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'unit-alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      // the main job: `npx vitest perf` (every file whose path says perf), about two minutes on a 2-core machine
      perfProject({
        topologies: {
          // one simulated SGLang worker (set `model` and `engine: 'sglang'` for a GPU box)
          node: { workers: 1, server: { maxRunningRequests: 64 } },
          // four workers behind a router
          cluster: {
            workers: 4,
            router: {
              policy: 'cache_aware',
              args: ['--health-check-interval-secs', '1', '--cb-timeout-duration-secs', '2'],
            },
          },
        },
      }),
      // the long studies (capacity searches, routing studies): `npx vitest run --project 'perf-long*'`; their paths
      // do not say "perf", so the main job's filter leaves them out. Two at a time (each keeps a 2-core machine about
      // half busy), then ALONE_STUDIES one at a time with the machine to themselves
      twoAtATime(
        perfProject({
          name: 'perf-long',
          include: ['studies/**/*.study.ts'],
          topologies: {
            // at --speed 2: routing-policies.study.ts's 80 req/s is 40 at speed 1, in half the time
            cluster: {
              workers: 4,
              sim: { speed: 2 },
              router: {
                policy: 'cache_aware',
                args: ['--health-check-interval-secs', '1', '--cb-timeout-duration-secs', '2'],
              },
            },
          },
        }),
        ALONE_STUDIES,
      ),
      alone(perfProject({ name: 'perf-long-alone', include: ALONE_STUDIES })),
    ],
  },
})

import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { SeededRandom } from '../src/common/seeded-random.ts'
import type { BenchOptions } from '../src/executors/bench-options-schema.ts'
import { changePoints } from '../src/history/change-points.ts'
import { checkHistory } from '../src/history/check-history.ts'
import { HistoryStore } from '../src/history/history-store.ts'
import { openHistory } from '../src/history/open-history.ts'
import { readRunFolder } from '../src/load/run-folder-reader.ts'
import { toNotRegress } from '../src/matchers/history-matchers.ts'
import { benchRequests } from '../src/run/bench-requests.ts'
import { invalidRun, limitsOffWarning } from '../src/slo/evaluate-slo.ts'
import { ANY_PACE, ANY_PACE_FLAGS } from './helpers/any-pace.ts'
import { cli, ROOMY_CLIENT } from './helpers/cli.ts'
import { type PostgresServer, postgresUnavailable, startPostgres } from './helpers/postgres.ts'
import { startSimWorker } from './helpers/sim.ts'

expect.extend({ toNotRegress })

// Issue 33: performance history. The store is a real SQLite file (node:sqlite), written by the CLI as a user runs it.
const tmp = (): string => mkdtempSync(join(tmpdir(), 'llm-perf-history-'))

/** A copy of a run folder whose summary.json `change` edited: what another host, clock or hand would have written. */
function editedCopy(dir: string, change: (summary: Record<string, any>) => void): string {
  const copy = tmp()
  cpSync(dir, copy, { recursive: true })
  const summary = JSON.parse(readFileSync(join(copy, 'summary.json'), 'utf8'))
  change(summary)
  writeFileSync(join(copy, 'summary.json'), JSON.stringify(summary))
  return copy
}

test('change points: a known step is found where it is, noise alone and one outlier are not changes', () => {
  const r = new SeededRandom(11)
  const noise = (n: number, mean: number, sd: number): number[] =>
    Array.from({ length: n }, () => mean + sd * r.normal())
  const step = changePoints([...noise(30, 100, 2), ...noise(10, 117, 2)])
  expect(step.map((c) => c.index)).toEqual([30])
  expect(step[0]?.relative).toBeGreaterThan(0.15)
  expect(step[0]?.pValue).toBeLessThanOrEqual(0.01)
  expect(changePoints(noise(60, 100, 5))).toEqual([])
  // Hunter's (now Apache Otava's) own example series, from its test_change_point_detection: changes at 6 and at 4
  expect(changePoints([1.02, 0.95, 0.99, 1.0, 1.12, 0.9, 0.5, 0.51, 0.48, 0.48, 0.55]).map((c) => c.index)).toEqual([6])
  expect(changePoints([2.02, 2.03, 2.01, 2.04, 1.82, 1.85, 1.79, 1.81, 1.8, 1.76, 1.78]).map((c) => c.index)).toEqual([
    4,
  ])
  expect(changePoints([...noise(30, 100, 2), 400, ...noise(30, 100, 2)])).toEqual([])
  // two changes, up then down, each found within two points of where it is
  const two = changePoints([...noise(40, 10, 0.5), ...noise(40, 14, 0.5), ...noise(40, 11, 0.5)]).map((c) => c.index)
  expect(two).toHaveLength(2)
  expect(Math.abs((two[0] as number) - 40)).toBeLessThanOrEqual(2)
  expect(Math.abs((two[1] as number) - 80)).toBeLessThanOrEqual(2)
})

/**
 * One workload's runs: 30 at --speed 2, then 10 at 1.5 (speed 1 and 0.75 in half the time), seeds 1…40. Not faster:
 * at --speed 4 a step is ~2 ms and a busy CI machine's scheduling hid the 15 % in one run's noise. Not 0.85 of the
 * speed: at 2 and 1.7 two CI runs (of ~10) found no change where the ten slower runs followed, the busy machine's
 * timers adding ~1 ms to steps of ~2 ms in some runs of the thirty.
 */
const WORKLOAD: BenchOptions = {
  rate: 100,
  requests: 24,
  seed: 7,
  dataset: { kind: 'random', inputLen: 64, outputLen: 16 },
  metricsIntervalMs: 0,
  quiet: true,
}
/** The ten slower runs' speed (0.75 of the thirty's 2): the regression the gate must find. */
const SLOWER = '1.5'
let fortyRuns: Promise<string[]> | undefined
/** The 40 run folders, made once for every test that records them (SQLite and PostgreSQL alike). */
function runFolders(): Promise<string[]> {
  fortyRuns ??= (async () => {
    const dirs: string[] = []
    for (const [speed, runs] of [
      ['2', 30],
      [SLOWER, 10],
    ] as const) {
      const w = await startSimWorker(['--speed', speed], `history-${speed}`)
      try {
        for (let i = 0; i < runs; i++) {
          const dir = tmp()
          // a new seed each run, as a CI that varies its prompts does: the seed does not split the workload. Valid
          // at any pace: `history record` leaves an invalid run out, and beside another test file a load thread can
          // wait for the CPU (dispatch lag p99 44 ms); the gate must hold against that noise, not lose its runs
          await benchRequests(w, { ...WORKLOAD, validity: ANY_PACE, seed: dirs.length + 1, outDir: dir })
          dirs.push(dir)
        }
      } finally {
        await w.stop()
      }
    }
    return dirs
  })()
  return fortyRuns
}

/** 100 copies of one run, each its own start (a run's identity). */
async function hundredRuns(): Promise<string[]> {
  const w = await startSimWorker(['--speed', '4'], 'history-writers')
  const base = tmp()
  try {
    // valid at any pace: an invalid run's 100 copies are all left out by `history record` (one CI run: 0 recorded)
    await benchRequests(w, {
      rate: 100,
      requests: 5,
      metricsIntervalMs: 0,
      outDir: base,
      quiet: true,
      validity: ANY_PACE,
    })
  } finally {
    await w.stop()
  }
  const summary = JSON.parse(readFileSync(join(base, 'summary.json'), 'utf8'))
  return Array.from({ length: 100 }, (_, i) => {
    const dir = tmp()
    cpSync(base, dir, { recursive: true })
    const start = summary.load.start_epoch_ms + i * 1000
    writeFileSync(
      join(dir, 'summary.json'),
      JSON.stringify({
        ...summary,
        started_at: new Date(start).toISOString(),
        load: { ...summary.load, start_epoch_ms: start },
      }),
    )
    return dir
  })
}

test('30 runs with seeds 1…30 at one speed then 10 at 0.75 of it: one workload, and history check finds the regression at the 31st run', async () => {
  // --speed 2 and 1.5: the simulator is time-scale invariant, so this is speed 1 and 0.75 in half the time
  const dirs = await runFolders()
  const db = join(tmp(), 'history.sqlite')
  const first = await cli(['history', 'record', ...dirs.slice(0, 30), '--db', db, '--label', 'gpu=sim'])
  expect(first.stdout, first.all).toMatch(/recorded 30 runs/u)
  const before = await cli(['history', 'check', '--db', db, '--metric', 'tpot.p50'])
  expect(before.exitCode, before.all).toBe(0)
  // no regression: an improvement may be found where the machine got quieter mid-series (2.10 → 2.02 ms at run 13
  // in a CI run, p = 0.001: a real change in what was measured; it fails no gate)
  expect(before.stdout).toMatch(/tpot\.p50 \(workload \w+, 30 runs\): (no change|improvement)/u)
  await cli(['history', 'record', ...dirs.slice(30), '--db', db])
  const after = await cli(['history', 'check', '--db', db, '--metric', 'tpot.p50', '--json'])
  expect(after.exitCode, after.all).toBe(1)
  const json = JSON.parse(after.stdout)
  expect(json.regressions).toHaveLength(1)
  const [reg] = json.regressions
  expect(Math.abs(reg.position - 31)).toBeLessThanOrEqual(2)
  expect(reg.metric).toBe('tpot.p50')
  expect(reg.relative).toBeGreaterThan(0.1)
  expect(reg.run).toBe(dirs[reg.position - 1])
  // history.html: the series with its change, each point a link to its run's report
  const out = join(tmp(), 'history.html')
  expect((await cli(['history', 'report', '--db', db, '--metric', 'tpot.p50', '--out', out])).exitCode).toBe(0)
  const html = readFileSync(out, 'utf8')
  expect(html).toMatch(/tpot\.p50 · workload \w+ · 40 runs · newest change: regression at run \d+/u)
  // the newest run against the band the runs since the change (31, ± 2) predict: the 40th judged against 31–39
  expect(html).toMatch(/newest run's band \(from runs (29|30|31|32|33)–39\): low/u)
  expect(html).toContain(`<a href="${encodeURI(dirs[0] as string)}/report.html">`)
  // a run recorded twice is one run
  const again = await cli(['history', 'record', ...dirs.slice(0, 5), '--db', db])
  expect(again.stdout).toMatch(/recorded 0 runs \(5 already there\)/u)
  const store = new HistoryStore(db)
  try {
    expect(store.runs()).toHaveLength(40)
    // the per-request samples are kept: any percentile can be recomputed
    expect(store.samples(store.runs()[0] as never, 'tpot').length).toBe(24)
  } finally {
    store.close()
  }
  // `run --history-db`: the run joins the series and is judged at once, as history check judges it; the series
  // regressed at the 31st run and this run is as slow, so it fails, saying where
  const w = await startSimWorker(['--speed', SLOWER], 'history-cli-run')
  try {
    const r = await cli(
      [
        'run',
        w.url,
        '--rate',
        '100',
        '--requests',
        '24',
        '--input-len',
        '64',
        '--output-len',
        '16',
        '--seed',
        '99',
      ].concat(
        ['--metrics-interval-ms', '0', '--out-dir', tmp(), '--history-db', db],
        // judged at any client pace, as the 40 are: one CI run's dispatch lag p99 read 28.2 ms beside another test
        // file and the run was invalid, so nothing was judged
        ANY_PACE_FLAGS,
      ),
    )
    expect(r.stdout, r.all).toMatch(/\nhistory:\n/u)
    expect(r.stdout).toMatch(/✗ tpot\.p50 \(workload \w+, 41 runs\): regression at run (29|30|31|32|33) /u)
    expect(r.exitCode, r.all).toBe(1)
  } finally {
    await w.stop()
  }
}, 300_000)

test('the gate judges the newest run: 40 runs of one workload checked after each from the 6th raise no alarm, and the first run on a 2× slower server fails, named', async () => {
  // at --speed 1: at 4 the steps are ~2 ms and a moment of a busy CI machine moved a run's TTFT p50 2.8× (4.6 →
  // 13.1 ms, a real excursion the gate rightly flagged); TPOT p50 and throughput at speed 1 vary ~2–6 % here
  const dirs: string[] = []
  const same = await startSimWorker(['--speed', '1'], 'history-40')
  try {
    for (let i = 0; i < 40; i++) {
      const dir = tmp()
      await benchRequests(same, { ...WORKLOAD, validity: ANY_PACE, seed: 101 + i, outDir: dir })
      dirs.push(dir)
    }
  } finally {
    await same.stop()
  }
  const db = join(tmp(), 'history.sqlite')
  const metrics = ['tpot.p50', 'output_token_throughput']
  // recorded and checked in this process (what `history record` and `history check` call), one run at a time
  const store = new HistoryStore(db)
  try {
    for (const [i, dir] of dirs.entries()) {
      store.record(await readRunFolder(dir, 'record'), {})
      if (i + 1 < 6) continue
      const { regressions } = checkHistory(store, { metrics })
      expect(regressions, `after run ${i + 1}`).toEqual([])
    }
  } finally {
    store.close()
  }
  // --speed 0.5 where the series ran at 1: every step takes twice as long
  const w = await startSimWorker(['--speed', '0.5'], 'history-2x')
  const slow = tmp()
  try {
    // valid at any pace, as the 40 are: `history record` leaves an invalid run out (this one's dispatch lag p99 read
    // 33 ms beside another test file), and then there is nothing to judge
    await benchRequests(w, { ...WORKLOAD, validity: ANY_PACE, seed: 141, outDir: slow })
  } finally {
    await w.stop()
  }
  await cli(['history', 'record', slow, '--db', db])
  const check = await cli(['history', 'check', '--db', db, '--metric', 'tpot.p50', '--json'])
  expect(check.exitCode, check.all).toBe(1)
  const [reg] = JSON.parse(check.stdout).regressions
  expect(reg).toMatchObject({ metric: 'tpot.p50', position: 41, run: slow, by: 'newest runs' })
  expect(reg.relative).toBeGreaterThan(0.8)
  const text = await cli(['history', 'check', '--db', db, '--metric', 'tpot.p50'])
  expect(text.stdout).toMatch(/✗ tpot\.p50 \(workload \w+, 41 runs\): regression at run 41 .*found by the newest runs/u)
}, 300_000)

test('runs that do not group say why instead of a silent "not enough history"', async () => {
  const dirs = (await runFolders()).slice(0, 3)
  const db = join(tmp(), 'history.sqlite')
  // three workloads of one run each: the same folders with another rate recorded
  for (const [i, dir] of dirs.entries()) {
    const copy = editedCopy(dir, (summary) => {
      summary.options.rate = 10 * (i + 1)
    })
    await cli(['history', 'record', copy, '--db', db])
  }
  const check = await cli(['history', 'check', '--db', db, '--metric', 'tpot.p50'])
  expect(check.exitCode).toBe(0)
  expect(check.stdout).toMatch(/· 3 workloads of 1 run each \(6 needed\): they differ in rate/u)
  // a metric nobody records is an error naming it, not a gate that passes forever
  const typo = await cli(['history', 'check', '--db', db, '--metric', 'tpot.P50', '--metric', 'ttft.p999'])
  expect(typo.exitCode).toBe(1)
  expect(typo.stderr).toMatch(/the history records no "tpot\.P50" \(did you mean tpot\.p50\?\)/u)
  expect(typo.stderr).toMatch(/the history records no "ttft\.p999" \(did you mean ttft\.p99\?\)/u)
  const effect = await cli(['history', 'check', '--db', db, '--min-effect', 'lots'])
  expect(effect.stderr).toMatch(/--min-effect: expected a change such as 5% or tpot\.p50=2%, got "lots"/u)
  // a mistyped --db is not an empty history that passes: nothing is created, and it says so
  const missing = join(tmp(), 'nested', 'histroy.sqlite')
  const noDb = await cli(['history', 'check', '--db', missing])
  expect(noDb.exitCode).toBe(1)
  expect(noDb.stderr).toContain(`--db: no history at ${missing}`)
  expect(existsSync(join(missing, '..'))).toBe(false)
  expect((await cli(['history', 'report', '--db', missing, '--out', join(tmp(), 'h.html')])).exitCode).toBe(1)
  // a file that is not a database: one line naming it and the driver's words, no stack
  const garbage = join(tmp(), 'garbage.sqlite')
  writeFileSync(garbage, 'not a database, '.repeat(512))
  const bad = await cli(['history', 'check', '--db', garbage])
  expect(bad.exitCode).toBe(1)
  expect(bad.stderr).toMatch(new RegExp(`cannot open the history at ${garbage}: .*not a database`, 'u'))
  expect(bad.stderr).not.toMatch(/\n\s+at /u)
  // a branch no run was recorded on names the branches there are
  const branch = await cli(['history', 'check', '--db', db, '--branch', 'mian'])
  expect(branch.exitCode).toBe(1)
  expect(branch.stderr).toMatch(/--branch: no run in .* was recorded on "mian"; its runs' branches: /u)
})

test('a history that cannot be written ends no sweep: every point runs, sweep.json is written, each failure is said', async () => {
  const w = await startSimWorker(['--speed', '4'], 'history-unwritable')
  try {
    const out = tmp()
    // a folder where the database file should be: SQLite cannot open it
    const db = tmp()
    const r = await cli(
      ['sweep', w.url, '--rates', '20,40', '--requests', '10', '--input-len', '32', '--output-len', '8'].concat([
        '--metrics-interval-ms',
        '0',
        '--out-dir',
        out,
        '--history-db',
        db,
      ]),
    )
    expect(r.stderr.match(/this run was not recorded in the history: could not write /gu), r.all).toHaveLength(2)
    const swept = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8'))
    expect(swept.points).toHaveLength(2)
    // the gate could not judge what it could not record: not a pass, said in a line naming the database
    expect(r.stdout).toContain(`✗ the history at ${db} could not be read, nothing was judged: `)
    expect(r.exitCode, r.all).toBe(1)
  } finally {
    await w.stop()
  }
})

test('capacity --history-db judges the steps that met the SLO, each against its rate’s series', async () => {
  const w = await startSimWorker(['--speed', '4'], 'history-capacity')
  try {
    const db = join(tmp(), 'history.sqlite')
    const r = await cli(
      [
        'capacity',
        w.url,
        '--slo',
        'ttft.p50<5000',
        '--min',
        '8',
        '--max',
        '16',
        '--step-duration-s',
        '1',
        '--no-confirm',
      ].concat([
        '--input-len',
        '32',
        '--output-len',
        '8',
        '--metrics-interval-ms',
        '0',
        // a step invalid twice stops the search: the client's pace is not what is judged here
        ...ROOMY_CLIENT,
        '--out-dir',
        tmp(),
        '--history-db',
        db,
      ]),
    )
    expect(r.stdout, r.all).toMatch(
      /history \(the steps that met the SLO\):\n· ttft\.p50 \(workload \w+, 1 run\): not enough history/u,
    )
    expect(r.exitCode, r.all).toBe(0)
  } finally {
    await w.stop()
  }
})

test('toNotRegress on a run its own limits call invalid does not pass: it says why, and the history left the run out', async () => {
  const w = await startSimWorker(['--speed', '4'], 'history-invalid')
  try {
    const db = join(tmp(), 'history.sqlite')
    // no dispatch is ever 1 µs late or less: the run's own limit makes it invalid
    const run = await benchRequests(w, {
      ...WORKLOAD,
      outDir: tmp(),
      validity: { maxDispatchLagMs: 0.001 },
      history: { db },
    })
    expect(() => expect(run).toNotRegress({ metrics: ['tpot.p50'], db })).toThrow(
      /Invalid run: the load generator fell behind: dispatch lag p99 [\d.]+ ms > 0\.001 ms.*It says nothing about the server and was not recorded in the history/su,
    )
    expect(existsSync(db)).toBe(false)
    // nor does `history record` take it among valid folders: the others are recorded, it is named and left out
    const [valid] = await runFolders()
    const r = await cli(['history', 'record', dirname(run.files.csv), valid as string, '--db', db])
    expect(r.exitCode, r.all).toBe(0)
    expect(r.stdout).toMatch(/recorded 1 run \(1 invalid, left out\)/u)
    expect(r.stderr).toMatch(
      /· .*: not recorded, the run is invalid: the load generator fell behind: dispatch lag p99/u,
    )
  } finally {
    await w.stop()
  }
})

test('validity limits turned off are said, with what the default limits would call the run', async () => {
  const [dir] = await runFolders()
  const { validity: _, ...options } = JSON.parse(readFileSync(join(dir as string, 'summary.json'), 'utf8')).options
  const read = JSON.parse(readFileSync(join(dir as string, 'summary.json'), 'utf8'))
  // a calm client's figures (a busy CI machine's own run read a loop delay p99 of 57 ms): what is judged is the words
  const summary = {
    ...read,
    options,
    dispatch_lag_ms: { ...read.dispatch_lag_ms, p99: 1 },
    event_loop_delay_ms: { ...read.event_loop_delay_ms, p99: 5 },
    load: { ...read.load, receive_busy: 0.1 },
  }
  expect(limitsOffWarning(summary)).toBeUndefined()
  const off = { ...summary, options: { ...summary.options, validity: { maxDispatchLagMs: 'Infinity' } } }
  expect(limitsOffWarning(off)).toBe(
    'validity limits off (maxDispatchLagMs = Infinity): the default limits would also call this run valid',
  )
  // an overloaded client's run: 92 ms of dispatch lag at p99, which the default 25 ms limit calls invalid
  const late = { ...off, dispatch_lag_ms: { ...summary.dispatch_lag_ms, p99: 92 } }
  expect(invalidRun(late)).toBeUndefined()
  expect(limitsOffWarning(late)).toMatch(
    /^validity limits off \(maxDispatchLagMs = Infinity\): under the default limits this run is invalid: the load generator fell behind: dispatch lag p99 92\.0 ms > 25 ms/u,
  )
})

test('values no run measures are refused by name, the other folders recorded; a lone surrogate is stored as text any database takes', async () => {
  const [a, b] = await runFolders()
  const db = join(tmp(), 'history.sqlite')
  const huge = editedCopy(a as string, (s) => {
    s.metrics.tpot.p50 = 1e308
    s.metrics.ttft.p99 = -3
  })
  // JSON text's own escape: what a server's /server_info can put in the summary
  const surrogate = editedCopy(b as string, (s) => {
    s.server_info = { ...(s.server_info ?? {}), model_path: 'model-\ud800' }
  })
  const r = await cli(['history', 'record', huge, surrogate, '--db', db])
  expect(r.exitCode, r.all).toBe(1)
  expect(r.stdout).toMatch(/recorded 1 run in/u)
  expect(r.stderr).toMatch(/✗ .*: not recorded, its summary holds what no run measures: /u)
  expect(r.stderr).toMatch(/ttft\.p99 = -3/u)
  expect(r.stderr).toMatch(/tpot\.p50 = 1e\+308/u)
  const { DatabaseSync } = await import('node:sqlite')
  const sqlite = new DatabaseSync(db, { readOnly: true })
  try {
    const { summary } = sqlite.prepare('SELECT summary FROM runs').get() as { summary: string }
    expect(summary).not.toMatch(/\\ud800/u)
    expect(JSON.parse(summary).server_info.model_path).toBe('model-\ufffd')
  } finally {
    sqlite.close()
  }
})

test('a runner whose clock is 24.5 minutes behind does not hide its regression: the series is in the order recorded', async () => {
  const dirs = await runFolders()
  const db = join(tmp(), 'history.sqlite')
  await cli(['history', 'record', ...dirs.slice(0, 30), '--db', db])
  // 6 runs 40 % slower, as a runner with a slow clock stamps them: before the 15th run had even started. The change
  // is injected (copies of runs 25–30, their tpot.p50 × 1.4) so that what is judged is the order, not whether 6
  // runs at 0.85 of the speed stand out of a busy machine's noise (one CI run's 34th–36th read as fast as the 30)
  const early = JSON.parse(readFileSync(join(dirs[14] as string, 'summary.json'), 'utf8')).load.start_epoch_ms - 60_000
  const skewed = dirs.slice(24, 30).map((dir, i) =>
    editedCopy(dir, (summary) => {
      const start = early + i * 1000
      summary.started_at = new Date(start).toISOString()
      summary.load.start_epoch_ms = start
      summary.metrics.tpot.p50 *= 1.4
    }),
  )
  for (const dir of skewed) await cli(['history', 'record', dir, '--db', db])
  const check = await cli(['history', 'check', '--db', db, '--metric', 'tpot.p50', '--json'])
  expect(check.exitCode, check.all).toBe(1)
  const [reg] = JSON.parse(check.stdout).regressions
  expect(Math.abs(reg.position - 31)).toBeLessThanOrEqual(2)
}, 300_000)

test('the shards of one run are each kept, each its own series; the run recorded again is still one run', async () => {
  const [a, b] = await runFolders()
  const start = JSON.parse(readFileSync(join(a as string, 'summary.json'), 'utf8')).load.start_epoch_ms
  // what two hosts write for `shard: {count: 2, index}` and one `startAt`: one start, one seed, one target
  const shards = [a, b].map((dir, index) =>
    editedCopy(dir as string, (summary) => {
      summary.load = { ...summary.load, start_epoch_ms: start, shard: { index, count: 2 } }
      summary.options = { ...summary.options, shard: { index, count: 2 }, seed: 1 }
      summary.seed = 1
    }),
  )
  const db = join(tmp(), 'history.sqlite')
  const r = await cli(['history', 'record', ...shards, '--db', db])
  expect(r.stdout, r.all).toMatch(/recorded 2 runs/u)
  const again = await cli(['history', 'record', ...shards, '--db', db])
  expect(again.stdout, again.all).toMatch(/2 already there/u)
  const check = await cli(['history', 'check', '--db', db, '--metric', 'tpot.p50', '--json'])
  const verdicts = JSON.parse(check.stdout).verdicts as { workload: string; runs: number }[]
  expect(verdicts.map((v) => v.runs)).toEqual([1, 1])
  expect(new Set(verdicts.map((v) => v.workload)).size).toBe(2)
})

test('labels pick the runs judged; another model or the same prompts every run is another series', async () => {
  const dirs = await runFolders()
  const db = join(tmp(), 'history.sqlite')
  await cli(['history', 'record', ...dirs.slice(0, 6), '--db', db, '--label', 'gpu=h100'])
  await cli(['history', 'record', ...dirs.slice(6, 12), '--db', db, '--label', 'gpu=a100'])
  const otherModel = [12, 13].map((i) =>
    editedCopy(dirs[i] as string, (s) => {
      s.server_info = { ...(s.server_info ?? {}), model_path: 'another-model' }
    }),
  )
  const repeated = editedCopy(dirs[14] as string, (s) => {
    s.options.promptNonce = false
  })
  await cli(['history', 'record', ...otherModel, repeated, '--db', db, '--label', 'gpu=h100'])
  const runsOf = async (args: string[]): Promise<number[]> => {
    const r = await cli(['history', 'check', '--db', db, '--metric', 'tpot.p50', '--json', ...args])
    return (JSON.parse(r.stdout).verdicts as { runs: number }[]).map((v) => v.runs).sort((a, b) => b - a)
  }
  expect(await runsOf([])).toEqual([12, 2, 1])
  expect(await runsOf(['--label', 'gpu=h100'])).toEqual([6, 2, 1])
  expect(await runsOf(['--label', 'gpu=a100'])).toEqual([6])
  const none = await cli(['history', 'check', '--db', db, '--label', 'gpu=b200'])
  expect(none.exitCode).toBe(1)
  expect(none.stderr).toContain(`--label: no run in ${db} is labelled gpu=b200; its runs' values of gpu: a100, h100`)
})

test('a perf test recorded by the history keeps a folder a run, and its history verdict is in the end-of-run table', async () => {
  const artifacts = tmp()
  const db = join(tmp(), 'history.sqlite')
  const project = fileURLToPath(new URL('./fixtures/history-project', import.meta.url))
  const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url))
  const perf = () =>
    execa(process.execPath, [vitest, 'run', '--root', project, '--project', 'perf'], {
      env: { ARTIFACTS: artifacts, HISTORY_DB: db, CI: 'true' },
      reject: false,
      all: true,
    })
  for (let i = 0; i < 2; i++) {
    const r = await perf()
    expect(r.exitCode, r.all).toBe(0)
    // the history's verdict beside the run in the table and runs.json, not a bare SLO ✓
    expect(r.all).toMatch(/tpot\.p50 \(not enough history\)/u)
  }
  expect(readFileSync(join(project, '.vitest', 'llm-perf', 'runs.json'), 'utf8')).toMatch(/not enough history/u)
  const store = new HistoryStore(db)
  try {
    const dirs = store.runs().map((r) => r.dir)
    expect(dirs).toHaveLength(2)
    expect(new Set(dirs).size).toBe(2)
    for (const d of dirs) expect(existsSync(join(d, 'summary.json')), d).toBe(true)
  } finally {
    store.close()
  }
}, 120_000)

test('history check reads while a writer holds the history: it waits for no lock and writes nothing', async () => {
  const [a] = await runFolders()
  const db = join(tmp(), 'history.sqlite')
  await cli(['history', 'record', a as string, '--db', db])
  const { DatabaseSync } = await import('node:sqlite')
  const writer = new DatabaseSync(db)
  // a long `history record` elsewhere, mid-transaction: it holds the write lock
  writer.exec('BEGIN IMMEDIATE')
  try {
    const check = await cli(['history', 'check', '--db', db, '--metric', 'tpot.p50'])
    expect(check.exitCode, check.all).toBe(0)
    expect(check.stdout).toMatch(/tpot\.p50 \(workload \w+, 1 run\): not enough history/u)
  } finally {
    writer.exec('ROLLBACK')
    writer.close()
  }
})

test('a history damaged after it opened is one line naming it and what failed, not a driver’s stack', async () => {
  const dirs = await runFolders()
  const db = join(tmp(), 'history.sqlite')
  await cli(['history', 'record', ...dirs, '--db', db])
  // ten pages in the middle overwritten: the header (and so the open) is whole, the runs' pages are not
  const bytes = readFileSync(db)
  expect(bytes.length).toBeGreaterThan(4096 * 40)
  bytes.fill(0xa5, 4096 * 20, 4096 * 30)
  writeFileSync(db, bytes)
  const check = await cli(['history', 'check', '--db', db])
  expect(check.exitCode, check.all).toBe(1)
  expect(check.stderr).toMatch(
    /^error: the history at .*history\.sqlite failed while reading its runs: ERR_SQLITE_\w+ database disk image is malformed$/u,
  )
})

test('two writers recording 50 runs each at once: 100 runs, none lost or duplicated', async () => {
  const dirs = await hundredRuns()
  const db = join(tmp(), 'history.sqlite')
  const [a, b] = await Promise.all([
    cli(['history', 'record', ...dirs.slice(0, 50), '--db', db]),
    cli(['history', 'record', ...dirs.slice(50), '--db', db]),
  ])
  expect(a.exitCode, a.all).toBe(0)
  expect(b.exitCode, b.all).toBe(0)
  const store = new HistoryStore(db)
  try {
    const runs = store.runs()
    expect(runs).toHaveLength(100)
    expect(new Set(runs.map((r) => r.dir)).size).toBe(100)
  } finally {
    store.close()
  }
}, 120_000)

// The same history in a real PostgreSQL server (Debian's package; .ci/run installs it), as CI runners share one.
const noPostgres = postgresUnavailable()
if (noPostgres !== undefined) console.warn(`skipping the PostgreSQL history tests: ${noPostgres}`)
describe.skipIf(noPostgres !== undefined)('history in PostgreSQL (--db postgres://…)', () => {
  let pg: PostgresServer
  beforeAll(async () => {
    pg = await startPostgres()
  }, 60_000)
  afterAll(async () => {
    await pg?.stop()
  })

  test('30 runs then 10 at 0.75 of the speed: check exits 0, then 1 naming the 31st run; the password is never printed', async () => {
    const dirs = await runFolders()
    const first = await cli(['history', 'record', ...dirs.slice(0, 30), '--db', pg.url])
    expect(first.stdout, first.all).toMatch(
      /recorded 30 runs in postgres:\/\/perf:\*\*\*@127\.0\.0\.1:\d+\/llm_perf_test/u,
    )
    const before = await cli(['history', 'check', '--db', pg.url, '--metric', 'tpot.p50'])
    expect(before.exitCode, before.all).toBe(0)
    expect(before.stdout).toMatch(/tpot\.p50 \(workload \w+, 30 runs\): (no change|improvement)/u)
    await cli(['history', 'record', ...dirs.slice(30), '--db', pg.url])
    const after = await cli(['history', 'check', '--db', pg.url, '--metric', 'tpot.p50', '--json'])
    expect(after.exitCode, after.all).toBe(1)
    const [reg] = JSON.parse(after.stdout).regressions
    expect(Math.abs(reg.position - 31)).toBeLessThanOrEqual(2)
    expect(reg.run).toBe(dirs[reg.position - 1])
    const again = await cli(['history', 'record', ...dirs.slice(0, 5), '--db', pg.url])
    expect(again.stdout).toMatch(/recorded 0 runs \(5 already there\)/u)
    const out = join(tmp(), 'history.html')
    const report = await cli(['history', 'report', '--db', pg.url, '--metric', 'tpot.p50', '--out', out])
    expect(report.exitCode, report.all).toBe(0)
    expect(readFileSync(out, 'utf8')).toMatch(/tpot\.p50 · workload \w+ · 40 runs · newest change: regression/u)
    for (const r of [first, before, after, again, report]) expect(r.all).not.toContain('llm-perf-secret-pw')
    const store = await openHistory(pg.url)
    try {
      expect(store.runs()).toHaveLength(40)
      expect((await store.samples(store.runs()[0] as never, 'tpot')).length).toBe(24)
    } finally {
      await store.close()
    }
    // a run recorded by benchRequests itself joins the same series; the matcher judges it against PostgreSQL
    const w = await startSimWorker(['--speed', SLOWER], 'history-pg')
    try {
      // from the shell, in a process of its own: summary.json records the option, not the password
      const outDir = tmp()
      const cliRun = await cli(
        ['run', w.url, '--rate', '100', '--requests', '24', '--input-len', '64', '--output-len', '16'].concat([
          '--metrics-interval-ms',
          '0',
          '--out-dir',
          outDir,
          '--history-db',
          pg.url,
          // judged at any client pace, as the 40 are (an invalid run is not judged)
          ...ANY_PACE_FLAGS,
        ]),
      )
      // it joins the regressed series and is judged at once against PostgreSQL: it fails as history check would
      expect(cliRun.stdout, cliRun.all).toMatch(/✗ tpot\.p50 \(workload \w+, 41 runs\): regression at run 3\d /u)
      expect(cliRun.exitCode, cliRun.all).toBe(1)
      const recorded = readFileSync(join(outDir, 'summary.json'), 'utf8')
      expect(recorded).toContain('postgres://perf:')
      expect(recorded).not.toContain('llm-perf-secret-pw')
      expect(cliRun.all).not.toContain('llm-perf-secret-pw')
      const run = await benchRequests(w, { ...WORKLOAD, validity: ANY_PACE, outDir: tmp(), history: { db: pg.url } })
      await expect(expect(run).toNotRegress({ metrics: ['tpot.p50'], db: pg.url })).rejects.toThrow(
        /tpot\.p50 regressed at run 3\d of 4\d/u,
      )
    } finally {
      await w.stop()
    }
  }, 300_000)

  test('a reader whose role may only SELECT judges the history: checking writes nothing', async () => {
    const [a] = await runFolders()
    const recorded = await cli(['history', 'record', a as string, '--db', pg.url])
    expect(recorded.exitCode, recorded.all).toBe(0)
    const { default: postgres } = await import('postgres')
    const admin = postgres(pg.url, { max: 1, onnotice: () => undefined })
    try {
      await admin.unsafe(
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reader') THEN CREATE ROLE reader LOGIN PASSWORD 'reader-pw'; END IF; END $$",
      )
      await admin.unsafe('REVOKE CREATE ON DATABASE llm_perf_test FROM PUBLIC')
      await admin.unsafe('GRANT USAGE ON SCHEMA llm_perf TO reader')
      await admin.unsafe('GRANT SELECT ON ALL TABLES IN SCHEMA llm_perf TO reader')
    } finally {
      await admin.end()
    }
    const reader = pg.url.replace(/\/\/perf:[^@]+@/u, '//reader:reader-pw@')
    const check = await cli(['history', 'check', '--db', reader, '--metric', 'tpot.p50'])
    // judged (this database holds the other tests' series too, a regression among them): read, nothing refused
    expect(check.stderr, check.all).toBe('')
    expect(check.stdout).toMatch(/tpot\.p50 \(workload \w+, \d+ runs?\)/u)
  })

  test('a writer’s password reaches no row, file or line: a long one, one under 8 characters, one that does not parse', async () => {
    const { default: postgres } = await import('postgres')
    const admin = postgres(pg.url, { max: 1, onnotice: () => undefined })
    // a role whose password is too short to be masked as text: only masking the URL's structure hides it
    await admin.unsafe(`CREATE ROLE shortpw LOGIN SUPERUSER PASSWORD 'Qz7'`)
    const short = pg.url.replace(/\/\/perf:[^@]+@/u, '//shortpw:Qz7@')
    const w = await startSimWorker(['--speed', '4'], 'history-secrets')
    try {
      for (const db of [pg.url, short]) {
        const outDir = tmp()
        const r = await cli(
          ['run', w.url, '--rate', '100', '--requests', '8', '--input-len', '32', '--output-len', '4'].concat([
            '--metrics-interval-ms',
            '0',
            '--out-dir',
            outDir,
            '--history-db',
            db,
          ]),
        )
        expect(r.exitCode, r.all).toBe(0)
        const files = ['summary.json', 'report.html'].map((f) => readFileSync(join(outDir, f), 'utf8'))
        expect(files[0]).toMatch(/"db": "postgres:\/\/(perf|shortpw):\*\*\*@127\.0\.0\.1/u)
        for (const text of [r.all, ...files]) {
          expect(text).not.toContain('llm-perf-secret-pw')
          expect(text).not.toContain(':Qz7@')
        }
      }
      const stored = await admin.unsafe(`SELECT summary::text AS s FROM llm_perf.runs`)
      expect(stored.length).toBeGreaterThanOrEqual(2)
      for (const row of stored) {
        expect(row['s']).not.toContain('llm-perf-secret-pw')
        expect(row['s']).not.toContain(':Qz7@')
      }
      // an unencoded # in a password: refused before any request, the password not echoed
      const bad = pg.url.replace(/\/\/perf:[^@]+@/u, '//perf:ab#cd-secret@')
      const outDir = tmp()
      const refused = await cli([
        'run',
        w.url,
        '--rate',
        '1',
        '--requests',
        '60',
        '--out-dir',
        outDir,
        '--history-db',
        bad,
      ])
      expect(refused.exitCode).toBe(1)
      expect(refused.stderr).toMatch(
        /history\.db`: expected a URL such as postgres:.* got postgres:\/\/perf:\*\*\*@127/u,
      )
      expect(refused.all).not.toContain('cd-secret')
      expect(existsSync(join(outDir, 'requests.csv'))).toBe(false)
      const check = await cli(['history', 'check', '--db', bad])
      expect(check.exitCode).toBe(1)
      expect(check.all).not.toContain('cd-secret')
    } finally {
      await w.stop()
      await admin.end()
    }
  }, 120_000)

  test('two writers recording 50 runs each at once: 100 runs, none lost or duplicated', async () => {
    const dirs = await hundredRuns()
    const db = pg.url.replace('/llm_perf_test', '/postgres')
    const [a, b] = await Promise.all([
      cli(['history', 'record', ...dirs.slice(0, 50), '--db', db]),
      cli(['history', 'record', ...dirs.slice(50), '--db', db]),
    ])
    expect(a.exitCode, a.all).toBe(0)
    expect(b.exitCode, b.all).toBe(0)
    const store = await openHistory(db)
    try {
      expect(store.runs()).toHaveLength(100)
      expect(new Set(store.runs().map((r) => r.dir)).size).toBe(100)
    } finally {
      await store.close()
    }
  }, 120_000)
})

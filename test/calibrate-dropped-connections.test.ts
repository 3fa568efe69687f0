import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse } from 'csv-parse/sync'
import { expect, test } from 'vitest'
import { cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

/** A probe's requests.csv as its rows' error types, '' for a success (its error texts quoted, commas and all). */
const errorTypes = (folder: string): string[] =>
  (parse(readFileSync(join(folder, 'requests.csv'), 'utf8'), { columns: true }) as Array<Record<string, string>>).map(
    (r) => r['error_type'] as string,
  )

test('a probe whose connections the server dropped is probed once more, and the calibration goes on', async () => {
  // the worker closes its 3rd and 4th generation requests' connections unanswered: two of the warm-up probe's 16,
  // past the one a probe may lose. An H100's llama.cpp did so to 2 of the 48 requests of one decode probe (session 50)
  // and the whole calibration, 100 s of GPU time, ended there
  const server = await startSimWorker(['--speed', '8', '--fault-drop-requests', '3,4'], 'drops')
  const dir = mkdtempSync(join(tmpdir(), 'llm-perf-calibrate-drops-'))
  const run = cli(['calibrate', server.url, '--out', join(dir, 'profile.json'), '--work-dir', dir])
  let said = ''
  // enough once the probe after the repeated one has printed: the rest of a calibration is calibrate.test.ts's
  await new Promise<void>((resolve) => {
    run.stdout?.on('data', (b: Buffer) => {
      said += b.toString()
      if (/probed again\n[\s\S]*prefill 32 tokens: TTFT p50/u.test(said)) resolve()
    })
    void run.then(() => resolve())
  })
  run.kill('SIGINT')
  const r = await run
  expect(said, r.all).toMatch(
    /^ {2}warmup: 2 of 16 connections dropped by the server \(\{"reset":2\}; \S+requests\.csv\): probed again$/mu,
  )
  // the first try's rows say what happened to each request; the second's, all answered, are the ones the fit reads
  const probes = join(dir, 'probes')
  const folders = readdirSync(probes).sort()
  expect(folders.slice(0, 2)).toEqual(['01-warmup', '02-warmup-again'])
  expect(errorTypes(join(probes, '01-warmup')).filter((t) => t !== '')).toEqual(['reset', 'reset'])
  expect(errorTypes(join(probes, '02-warmup-again'))).toEqual(Array(16).fill(''))
  expect(r.all).not.toContain('calibration probe warm-up')
})

test('a probe that loses a few connections again is kept, said, and the calibration goes on; more is an error', async () => {
  // 3, 4 of the warm-up's 16 and 19, 20 of its second try (2 of 16, within the 10 % kept); then every request from
  // the 35th: the next probe's two tries lose more than they may keep, so calibrate stops and says which probe
  const drops = [3, 4, 19, 20, ...Array.from({ length: 200 }, (_, i) => 35 + i)]
  const server = await startSimWorker(['--speed', '8', '--fault-drop-requests', drops.join(',')], 'drops-twice')
  const dir = mkdtempSync(join(tmpdir(), 'llm-perf-calibrate-drops-twice-'))
  const r = await cli(['calibrate', server.url, '--out', join(dir, 'profile.json'), '--work-dir', dir])
  expect(r.stdout, r.all).toMatch(
    /^ {2}warmup-again: 2 of 16 connections dropped again: kept \(at most 10 %\), its streams that many fewer while they were \(\S+requests\.csv\)$/mu,
  )
  expect(errorTypes(join(dir, 'probes', '02-warmup-again')).filter((t) => t !== '')).toEqual(['reset', 'reset'])
  expect(r.exitCode).toBe(1)
  expect(r.all).toMatch(/calibration probe .+: (\d+) of \1 requests failed \(\{"reset":\1\}\)/u)
})

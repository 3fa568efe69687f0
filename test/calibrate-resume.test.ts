import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

/** The probe lines a calibration printed: the points it measured, in order. */
const probeLines = (out: string): string[] =>
  out.split('\n').filter((l) => /^ {2}(prefill \d+ tokens|simulator and client overhead|decode \d+ users)/u.test(l))

test('a calibration cut off goes on with --resume: the probes it finished are read from its journal, not probed again, and only the same server may resume it', async () => {
  const server = await startSimWorker(['--speed', '8'], 'resume')
  const other = await startSimWorker(['--speed', '8', '--max-running-requests', '8'], 'resume-other')
  const dir = mkdtempSync(join(tmpdir(), 'llm-perf-calibrate-resume-'))
  const out = join(dir, 'profile.json')
  const probes = join(dir, 'probes')
  try {
    // cut off as a GPU machine's time limit cuts one: SIGINT once the second decode probe has ended
    const first = cli(['calibrate', server.url, '--out', out, '--work-dir', dir])
    let said = ''
    await new Promise<void>((resolve) => {
      first.stdout?.on('data', (b: Buffer) => {
        said += b.toString()
        if (said.includes('  decode 2 users')) resolve()
      })
      void first.then(() => resolve())
    })
    first.kill('SIGINT')
    const cut = await first
    expect(cut.exitCode, cut.all).not.toBe(0)
    const before = probeLines(cut.stdout)
    expect(before.at(-1), cut.stdout).toMatch(/^ {2}decode 2 users/u)
    const foldersBefore = readdirSync(probes).filter((f) => /^\d+-/u.test(f))

    // another server may not resume it: its points would mix two servers. Said before a probe past the warm-up runs
    const mixed = await cli(['calibrate', other.url, '--out', join(dir, 'other.json'), '--work-dir', dir, '--resume'])
    expect(mixed.exitCode).toBe(1)
    expect(mixed.all).toMatch(/--resume: the journal \S+journal\.jsonl was written against another server: maxRunning/u)
    expect(mixed.all).toContain('256 then, 8 now')

    const resumed = await cli(['calibrate', server.url, '--out', out, '--work-dir', dir, '--resume'])
    expect(resumed.exitCode, resumed.all).toBe(0)
    // every point the cut-off call measured is read back as it was, said so, and none other is
    const after = probeLines(resumed.stdout)
    const fromJournal = after.filter((l) => l.endsWith(' (from the journal)'))
    expect(fromJournal).toEqual(before.map((l) => `${l} (from the journal)`))
    expect(after.length).toBeGreaterThan(before.length)
    expect(after.slice(before.length).every((l) => !l.includes('journal'))).toBe(true)
    // and not probed again: the resumed call's folders follow the first's, and none repeats a finished probe
    const foldersAfter = readdirSync(probes).filter((f) => /^\d+-/u.test(f))
    const added = foldersAfter.filter((f) => !foldersBefore.includes(f))
    const last = Math.max(...foldersBefore.map((f) => Number.parseInt(f, 10)))
    expect(added.every((f) => Number.parseInt(f, 10) > last)).toBe(true)
    const names = added.map((f) => f.replace(/^\d+-/u, ''))
    expect(names[0]).toBe('warmup')
    expect(names.some((n) => n.startsWith('prefill-') || n.startsWith('simulator-overhead-'))).toBe(false)
    expect(names).not.toContain('decode-c1-p128')
    expect(names).not.toContain('decode-c2-p128')
    expect(names).toContain('decode-c4-p128')
    // the profile's points are the journal's values, the first call's
    const profile = JSON.parse(readFileSync(out, 'utf8'))
    const journal = readFileSync(join(probes, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l))
    const journaled = new Map(journal.map((e: { key: string; value: unknown }) => [e.key, e.value]))
    for (const p of profile.calibration.fit.prefill.points)
      expect(p.ttft_ms).toBe((journaled.get(`prefill|as found|${p.prompt_tokens}`) as { ttft: number }).ttft)
    expect(profile.calibration.fit.decode.points.slice(0, 2)).toEqual(
      [1, 2].map((c) => (journaled.get(`decode|as found|${c}|128|128`) as { point: unknown }).point),
    )
  } finally {
    await Promise.all([server.stop(), other.stop()])
  }
})

test('a resumed calibration stops its fresh probes where the first call’s budget stopped them, not where its own clock would', async () => {
  const server = await startSimWorker(['--speed', '8'], 'resume-budget')
  const dir = mkdtempSync(join(tmpdir(), 'llm-perf-calibrate-resume-budget-'))
  const out = join(dir, 'profile.json')
  try {
    // a budget spent at once: 2 prefills and 3 decode probes, then the steadiness probe, where SIGINT cuts it once
    // the journal has marked the decode loop's end (a cut before that is a loop not ended, which a resume goes on with:
    // a clean-clone CI's SIGINT once came between the last decode line and the mark)
    const args = ['calibrate', server.url, '--out', out, '--work-dir', dir, '--budget-s', '0.001']
    const first = cli(args)
    const journal = join(dir, 'probes', 'journal.jsonl')
    const marked = (): boolean =>
      existsSync(journal) && readFileSync(journal, 'utf8').includes('"end|decodes as found"')
    let ended = false
    void first.then(() => (ended = true))
    while (!marked() && !ended) await new Promise((resolve) => setTimeout(resolve, 5))
    first.kill('SIGINT')
    const cut = await first
    expect(probeLines(cut.stdout).filter((l) => l.startsWith('  decode'))).toHaveLength(3)
    expect(cut.stdout).not.toContain('the server against itself')
    // resumed with a whole budget of its own clock left, it still probes none of the fresh points the first skipped
    const resumed = await cli([...args.slice(0, -2), '--resume'])
    expect(resumed.exitCode, resumed.all).toBe(0)
    const lines = probeLines(resumed.stdout)
    expect(lines).toEqual(probeLines(cut.stdout).map((l) => `${l} (from the journal)`))
    expect(resumed.stdout).toContain('the server against itself')
    const profile = JSON.parse(readFileSync(out, 'utf8'))
    expect(profile.calibration.fit.prefill.points).toHaveLength(2)
    expect(profile.calibration.fit.decode.points.map((d: { concurrency: number }) => d.concurrency)).toEqual([1, 2, 4])
  } finally {
    await server.stop()
  }
})

test('--resume needs the --work-dir of a calibration, said before anything is sent', async () => {
  const none = await cli(['calibrate', 'http://127.0.0.1:9', '--resume'])
  expect(none.exitCode).toBe(1)
  expect(none.stderr).toContain('--resume: expected --work-dir DIR, the folder of the calibration to go on from')
  const empty = mkdtempSync(join(tmpdir(), 'llm-perf-calibrate-resume-empty-'))
  const r = await cli(['calibrate', 'http://127.0.0.1:9', '--resume', '--work-dir', empty])
  expect(r.exitCode).toBe(1)
  expect(r.stderr).toContain(`--resume: expected a calibration's --work-dir (its probes/journal.jsonl), got ${empty}`)
})

import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { cli } from './helpers/cli.ts'
import { startSimWorker } from './helpers/sim.ts'

// calibrate's inputs: credentials kept out of what it writes, options it cannot use refused before it sends anything.
// Judged by nothing but their words, so beside the unit files (calibrate.test.ts, judged by latency, runs alone)

test('calibrate behind Basic auth: the password (too short to mask as text) is in no line, profile or simulator log', async () => {
  const server = await startSimWorker(['--speed', '8', '--max-running-requests', '4'], 'behind-auth')
  const dir = mkdtempSync(join(tmpdir(), 'llm-perf-calibrate-'))
  const out = join(dir, 'profile.json')
  try {
    // profiles are committed: the URL's credentials are masked by its structure
    const withPassword = server.url.replace('http://', 'http://calib:Pw4@')
    const r = await cli(['calibrate', withPassword, '--out', out, '--budget-s', '1', '--work-dir', dir])
    expect(r.exitCode, r.all).toBe(0)
    expect(r.stdout).toMatch(/^calibrating http:\/\/\*\*\*@127\.0\.0\.1:\d+ /u)
    expect(r.all).not.toContain('Pw4')
    const profile = readFileSync(out, 'utf8')
    expect(profile).not.toContain('Pw4')
    expect(JSON.parse(profile).calibration.server.url).toMatch(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+$/u)
    // nor in any file the probes left: their runs, the simulated workers' logs and the profile they ran
    const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => statSync(join(dir, f)).isFile())
    expect(files).toContain(join('probes', 'steadiness-profile.json'))
    for (const f of files) expect(readFileSync(join(dir, f), 'utf8'), f).not.toContain('Pw4')
  } finally {
    await server.stop()
  }
  const calibrated = await startSimWorker(['--profile', out], 'behind-auth-calibrated')
  await calibrated.stop()
  expect(readFileSync(calibrated.logFile, 'utf8')).not.toContain('Pw4')
}, 120_000)

test('calibrate refuses what it cannot use before it sends anything', async () => {
  const r = await cli([
    'calibrate',
    'not-a-url',
    '--api',
    'grpc',
    '--budget-s=-3',
    '--validate-slo',
    'ttft<5',
    '--validate-rates',
    '0.01,4',
    '--point-s',
    '10',
    '--layers',
    '16.5',
    '--out',
    tmpdir(),
  ])
  expect(r.exitCode).toBe(1)
  expect(r.stderr).toContain('URL: expected the server to calibrate')
  expect(r.stderr).toContain('--api: expected generate, completions or chat, got "grpc"')
  expect(r.stderr).toContain('--budget-s: expected a positive number, got "-3"')
  expect(r.stderr).toContain('--validate-slo: ttft needs an aggregation')
  expect(r.stderr).toContain('--layers: expected a whole number of layers, got "16.5"')
  // a held-out point lasts --point-s: 0.01 req/s would have sent its 20 requests over 33 minutes
  expect(r.stderr).toContain(
    '--validate-rates: 0.01 req/s sends 0 requests in a 10 s point, and a point needs 20 (2000 s at this rate)',
  )
  expect(r.stderr).not.toContain('4 req/s sends')
  // a profile path that is a folder is said before minutes of probing, not after them
  expect(r.stderr).toContain(`--out: expected a file to write the profile to, got the folder ${tmpdir()}`)
  const bad = await cli(['sim-server', '--profile', join(tmpdir(), 'no-such-profile.json')])
  expect(bad.exitCode).not.toBe(0)
  expect(bad.all).toMatch(/cannot read the profile .*no-such-profile\.json/u)
})

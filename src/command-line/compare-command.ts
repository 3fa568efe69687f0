import { join, resolve } from 'node:path'
import { ensureDir, writeArtifact } from '../common/artifact-file.ts'
import { fieldScale, NUMERIC_COLUMNS, type NumericColumn } from '../common/columns.ts'
import { InvalidOptionError, LlmPerfError } from '../common/errors.ts'
import { COMPARED_METRICS, shownValue, unitOf } from '../common/metric-registry.ts'
import { redact } from '../common/redact.ts'
import { type RunFolder, readRunFolder } from '../load/run-folder-reader.ts'
import { chartPage, escapeHtml as esc, PALETTE, svgChart } from '../report/svg-chart.ts'
import { cacheStateDifference } from '../summarise/cache-state.ts'
import { percentileDifference, percentileSorted } from '../summarise/statistics.ts'
import { workloadDifferences } from '../summarise/workload-differences.ts'
import { type Flags, flagHelp, parseFlags } from './flags.ts'

const COMPARE_FLAGS = {
  out: { type: 'string', arg: 'DIR', help: 'write compare.html and compare.json there' },
  'fail-on': {
    type: 'string',
    multiple: true,
    arg: "'ttft.p99>+10%'",
    help: 'exit 1 when the metric got worse by more than this, beyond noise (repeatable)',
  },
  'min-effect': {
    type: 'string',
    arg: '10%',
    help: 'the smallest change called better or worse (default 10 %); a smaller one beyond noise is "small"',
  },
  force: { type: 'boolean', help: 'compare runs of different workloads' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} as const satisfies Flags

export const COMPARE_HELP = `vitest-llm-perf compare A B [C ...] [--out DIR] [--fail-on 'ttft.p99>+10%'] [--min-effect 10%] [--force]

Compares run folders with the first (A): for TTFT, TPOT, ITL, end-to-end latency and queue times, each
percentile's change with a 95 % bootstrap interval of B − A (ms) and a verdict — better or worse (beyond noise and
at least --min-effect), small (beyond noise, under it), or within noise (the interval holds 0) — and throughput and
success rate. The bootstrap sees the noise within each run, not between runs: two runs of one server and seed
differed by −0.4 % and +7.7 %, hence a minimum effect. Runs of different workloads (dataset, rate, requests, api, arrival,
seed, users) are refused unless --force, naming what differs. --out DIR writes compare.html (the percentile
curves overlaid) and compare.json. --fail-on (repeatable) exits 1 when a metric got worse by more than the
given percentage, beyond noise.

${flagHelp(COMPARE_FLAGS)}

Example:
  npx vitest-llm-perf compare runs/main runs/branch --fail-on 'ttft.p99>+10%' --fail-on 'tpot.p50>+5%' --out cmp`

// the registry's compared metrics (ttfo: where both runs have it); a field a run lacks is left out
const FIELDS = COMPARED_METRICS
const PERCENTILES = [50, 90, 99] as const
export interface MetricChange {
  metric: string
  base: number
  value: number
  /** value − base, ms, with its 95 % bootstrap interval. */
  change: number
  lower: number
  upper: number
  relative: number
  /** better/worse: beyond noise and at least the minimum effect; small: beyond noise, under it. */
  verdict: 'better' | 'worse' | 'small' | 'within noise'
}

/** The smallest relative change compare calls better or worse unless --min-effect says otherwise. */
export const COMPARE_MIN_EFFECT = 0.1

/** A column's known values over successful requests, in ms, sorted. */
function values(run: RunFolder, field: string): Float64Array {
  return run.table.known(field as NumericColumn, { scale: fieldScale(field) }).sort()
}

/** The percentile's change from `a` to `b`, its bootstrap interval (seeded), and the verdict (lower is better). */
export function percentileChange(
  a: Float64Array,
  b: Float64Array,
  p: number,
  metric: string,
  minEffect = COMPARE_MIN_EFFECT,
): MetricChange {
  const { lower, upper } = percentileDifference(a, b, p)
  const base = percentileSorted(a, p)
  const value = percentileSorted(b, p)
  const relative = base === 0 ? (value === 0 ? 0 : Number.POSITIVE_INFINITY) : (value - base) / base
  const beyondNoise = lower > 0 || upper < 0
  return {
    metric,
    base,
    value,
    change: value - base,
    lower,
    upper,
    // from 0 no relative change is defined: a rise is judged on its own (absolute) size
    relative,
    verdict: !beyondNoise ? 'within noise' : Math.abs(relative) < minEffect ? 'small' : lower > 0 ? 'worse' : 'better',
  }
}

/** What differs between two runs' workloads, as "rate: 16 vs 32". */
const workloadOf = (a: RunFolder, b: RunFolder): string[] =>
  workloadDifferences(a.summary.options as Record<string, unknown>, b.summary.options as Record<string, unknown>)

/** `ttft.p99>+10%` → metric ttft p99 may rise at most 10 %. */
function parseFailOn(text: string): { metric: string; pct: number } {
  const m = /^\s*([a-z_]+)\.p(50|90|99)\s*>\s*\+?(\d+(?:\.\d+)?)\s*%\s*$/u.exec(text)
  if (m === null)
    throw new LlmPerfError(
      'LLMPERF_INVALID_ARGUMENT',
      `--fail-on: expected 'metric.pNN>+N%' such as 'ttft.p99>+10%', got ${JSON.stringify(text)}`,
    )
  return { metric: `${m[1]} p${m[2]}`, pct: Number(m[3]) }
}

const f = (v: number): string => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2))
/** A change's figure in its metric's unit: ms as always, a time per token to three significant digits. */
const fm = (c: MetricChange, v: number): string => {
  const unit = unitOf(c.metric.split(' ')[0] as string)
  return unit === 'ms' ? f(v) : shownValue(unit, v, 2)
}
const pct = (c: MetricChange): string =>
  Number.isFinite(c.relative) ? `${c.relative >= 0 ? '+' : ''}${(c.relative * 100).toFixed(1)}` : 'from 0'
/** Hit rates further apart than this are said beside a comparison. */
const CACHE_DIFFERENCE = 0.05

/** `vitest-llm-perf compare A B [C …]`: returns the exit code. */
export async function compareCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseFlags(argv, COMPARE_FLAGS, 'compare command line')
  const problems: string[] = []
  if (positionals.length < 2) problems.push(`expected at least two run folders (A B), got ${positionals.length}`)
  const failOn: Array<{ metric: string; pct: number }> = []
  for (const t of v['fail-on'] ?? [])
    try {
      failOn.push(parseFailOn(t))
    } catch (err) {
      problems.push((err as Error).message)
    }
  const effectText = v['min-effect']
  const effect = effectText === undefined ? undefined : /^\s*(\d+(?:\.\d+)?)\s*%\s*$/u.exec(effectText)
  if (effectText !== undefined && effect == null)
    problems.push(`--min-effect: expected a percentage such as 10%, got ${JSON.stringify(effectText)}`)
  const minEffect = effect == null ? COMPARE_MIN_EFFECT : Number(effect[1]) / 100
  if (problems.length > 0) throw new InvalidOptionError('compare command line', problems)
  const runs: RunFolder[] = []
  for (const d of positionals) runs.push(await readRunFolder(resolve(d), 'compare'))
  const [base, ...others] = runs as [RunFolder, ...RunFolder[]]
  if (v.force !== true) {
    const differ = others.flatMap((o) => workloadOf(base, o).map((d) => `${o.dir}: ${d}`))
    if (differ.length > 0)
      throw new LlmPerfError(
        'LLMPERF_INVALID_ARGUMENT',
        `compare: these runs are not the same workload, so their difference is not the server's alone:\n  ${differ.join('\n  ')}\n` +
          'Compare runs of one workload, or add --force to compare them anyway.',
      )
  }
  // ttft means the server's first token in one run and the client's in another: their difference is the meaning's
  const sources = others.filter((o) => o.summary.ttft_source !== base.summary.ttft_source)
  if (sources.length > 0 && v.force !== true)
    throw new LlmPerfError(
      'LLMPERF_INVALID_ARGUMENT',
      `compare: ttft is the server's first token in one run and the client's in another (ttft_source ${
        base.summary.ttft_source ?? '—'
      } in ${base.dir}, ${sources.map((o) => `${o.summary.ttft_source ?? '—'} in ${o.dir}`).join(', ')}): compare ` +
        'runs against servers that report alike (their client_ttft compares across them), or add --force',
    )
  const fields = FIELDS.filter(
    (fl) => NUMERIC_COLUMNS.includes(fl as NumericColumn) && runs.every((r) => values(r, fl).length > 1),
  )
  const lines: string[] = []
  const results: Array<{ dir: string; changes: MetricChange[] }> = []
  let failed = false
  for (const run of others) {
    const changes = fields.flatMap((field) => {
      const a = values(base, field)
      const b = values(run, field)
      return PERCENTILES.map((p) => percentileChange(a, b, p, `${field} p${p}`, minEffect))
    })
    results.push({ dir: run.dir, changes })
    lines.push(`\n${run.dir} vs ${base.dir}`)
    // one unit a column: the change in %, its interval in ms (of B − A), the verdict apart from both
    const intervals = changes.map((c) => `[${fm(c, c.lower)}, ${fm(c, c.upper)}]`)
    const width = Math.max('95 % interval of B − A (ms)'.length, ...intervals.map((t) => t.length))
    lines.push(
      `  ${'metric'.padEnd(24)}${'A (ms)'.padStart(10)}${'B (ms)'.padStart(10)}${'change (%)'.padStart(12)}   ` +
        `${'95 % interval of B − A (ms)'.padEnd(width)}   verdict`,
    )
    for (const [i, c] of changes.entries())
      lines.push(
        `  ${c.metric.padEnd(24)}${fm(c, c.base).padStart(10)}${fm(c, c.value).padStart(10)}${pct(c).padStart(12)}   ` +
          `${(intervals[i] as string).padEnd(width)}   ${c.verdict}`,
      )
    // a metric in another unit than the columns' ms says so once
    for (const field of fields.filter((fl) => unitOf(fl) !== 'ms')) lines.push(`  (${field}: ${unitOf(field)}, not ms)`)
    const rate = (k: 'request_throughput' | 'output_token_throughput' | 'success_rate'): string => {
      const a = base.summary[k]
      const b = run.summary[k]
      return `${k} ${a === null ? '—' : f(a)} → ${b === null ? '—' : f(b)}`
    }
    lines.push(`  ${rate('request_throughput')} · ${rate('output_token_throughput')} · ${rate('success_rate')}`)
    // a warm cache makes a run look faster than the server is: say so beside the figures it changed
    const hitA = base.summary.cache_hit_rate
    const hitB = run.summary.cache_hit_rate
    if (typeof hitA === 'number' && typeof hitB === 'number' && Math.abs(hitA - hitB) > CACHE_DIFFERENCE)
      lines.push(
        `  ! prefix cache hit rate ${(hitA * 100).toFixed(1)} % (A) vs ${(hitB * 100).toFixed(1)} % (B): the runs were ` +
          'not served alike, and the latencies differ for it (repeat with fresh prompts, or flush the cache)',
      )
    // llama.cpp attends over what idle slots still hold: the same load read 4× slower on a used server
    const warmth = cacheStateDifference(base.summary.server_cache_state, run.summary.server_cache_state)
    if (warmth !== undefined) lines.push(`  ! ${warmth}`)
    for (const rule of failOn) {
      const c = changes.find((x) => x.metric === rule.metric)
      if (c === undefined) {
        lines.push(`  ! --fail-on ${rule.metric}: not reported by both runs`)
        failed = true
      } else if (c.lower > 0 && c.base === 0) {
        lines.push(
          `  ✗ ${rule.metric} rose from 0 to ${f(c.value)} ms (beyond noise; no percentage of 0 is within +${rule.pct} %)`,
        )
        failed = true
      } else if (c.lower > 0 && c.relative * 100 > rule.pct) {
        lines.push(`  ✗ ${rule.metric} rose ${(c.relative * 100).toFixed(1)} % (> ${rule.pct} %, beyond noise)`)
        failed = true
      } else
        lines.push(
          `  ✓ ${rule.metric}: ${Number.isFinite(c.relative) ? `${(c.relative * 100).toFixed(1)} %` : 'from 0'}, ${c.verdict} (limit +${rule.pct} %)`,
        )
    }
  }
  if (v.out !== undefined) {
    const out = resolve(v.out)
    ensureDir(out)
    writeArtifact(join(out, 'compare.json'), `${JSON.stringify({ base: base.dir, results }, null, 2)}\n`)
    writeArtifact(join(out, 'compare.html'), compareHtml(runs, fields, results))
    lines.push(`\ncompare.html: ${join(out, 'compare.html')}`)
  }
  process.stdout.write(`${redact(lines.join('\n'))}\n`)
  return failed ? 1 : 0
}

/** The percentile curves of each field, every run overlaid (log scale: a tail 10× the median stays readable). */
function compareHtml(
  runs: RunFolder[],
  fields: string[],
  results: Array<{ dir: string; changes: MetricChange[] }>,
): string {
  const ps = Array.from({ length: 99 }, (_, i) => i + 1)
  const charts = fields.map((field) =>
    svgChart({
      title: `${field} by percentile`,
      xLabel: 'percentile',
      yLabel: `${field} (ms)`,
      logY: true,
      series: runs.map((r, k) => {
        const vs = values(r, field)
        return {
          name: r.dir.split('/').at(-1) ?? r.dir,
          color: PALETTE[k % PALETTE.length] as string,
          points: ps.map((p) => ({ x: p, y: percentileSorted(vs, p) })),
        }
      }),
    }),
  )
  const tables = results.map(
    (r) =>
      `<h2>${esc(r.dir)} vs ${esc(runs[0]?.dir ?? '')}</h2><table><thead><tr><th>metric</th><th>A (ms)</th><th>B (ms)</th><th>change (%)</th><th>95 % interval of B − A (ms)</th><th>verdict</th></tr></thead><tbody>${r.changes
        .map(
          (c) =>
            `<tr><td>${esc(c.metric)}</td><td>${fm(c, c.base)}</td><td>${fm(c, c.value)}</td><td>${pct(c)}</td><td>[${fm(c, c.lower)}, ${fm(c, c.upper)}]</td><td class="${c.verdict === 'worse' ? 'fail' : c.verdict === 'better' ? 'pass' : ''}">${c.verdict}</td></tr>`,
        )
        .join('')}</tbody></table>`,
  )
  return chartPage(
    'Runs compared',
    `<p>${runs.map((r) => esc(r.dir)).join(' · ')}. Times in ms over successful requests; intervals are 95 % bootstrap intervals of each percentile's change.</p>`,
    `${tables.join('\n')}\n${charts.join('\n')}`,
  )
}

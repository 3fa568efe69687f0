import { chartPage, escapeHtml as esc, PALETTE, svgChart } from '../report/svg-chart.ts'
import type { CapacityResult } from './results.ts'

const n = (v: number | null | undefined, digits = 1): string =>
  v === null || v === undefined ? '—' : Number(v.toFixed(digits)).toString()

/**
 * capacity.html: for each objective, its observed value and confidence interval at every step's rate, the
 * limit, and the bracket; then every step as a row (each links to its own report).
 */
export function capacityHtml(r: CapacityResult): string {
  const names = [...new Set(r.steps.flatMap((s) => s.objectives.map((o) => o.objective)))]
  const [lo, hi] = r.bracket
  const charts = names.map((name, k) => {
    const points = r.steps.flatMap((s) => {
      const o = s.objectives.find((x) => x.objective === name)
      if (o === undefined || o.observed === null) return []
      return [
        {
          x: s.rate,
          y: o.observed,
          lower: o.lower,
          upper: o.upper,
          // a step that did not pass is hollow, whatever this objective read: an overloaded step's percentiles can
          // each be under their limits while its queue grew (it was drawn filled beside a legend saying otherwise)
          hollow: o.verdict !== 'pass' || s.decision !== 'pass',
          label: `step ${s.index}: ${n(s.rate, 2)} req/s → ${n(o.observed, 2)} [${n(o.lower, 2)}, ${n(o.upper, 2)}] ${o.verdict}`,
        },
      ]
    })
    const limit = r.steps.flatMap((s) => s.objectives).find((o) => o.objective === name)?.limit
    const field = name.split(' ')[0] as string
    const unit = /rate|goodput|throughput|usage|num_/u.test(field) ? '' : ' (ms)'
    return svgChart({
      title: `${name} against offered load`,
      xLabel: 'arrival rate (req/s)',
      yLabel: `${name}${unit}`,
      series: [{ name, color: PALETTE[k % PALETTE.length] as string, points }],
      hLines: limit === undefined ? [] : [{ y: limit, label: `limit ${n(limit, 3)}` }],
      ...(hi === null || lo === 0 ? {} : { xBand: { from: lo, to: hi, label: `bracket [${n(lo, 2)}, ${n(hi, 2)}]` } }),
    })
  })
  const confirmation = r.confirmation === undefined ? [] : [r.confirmation]
  const rows = [...r.steps, ...confirmation].map((s) => {
    const cells = [
      String(s.index),
      s.phase,
      n(s.rate, 3),
      n(s.durationS, 1),
      String(s.requests),
      `<span class="${s.decision === 'pass' ? 'pass' : s.decision === 'fail' || s.decision === 'overloaded' ? 'fail' : 'undecided'}">${esc(s.decision)}${s.confident ? '' : ' (not confident)'}</span>`,
      `${n(s.summary.success_rate * 100, 1)} %`,
      n(s.summary.request_throughput, 2),
      s.summary.cache_hit_rate === undefined || s.summary.cache_hit_rate === null
        ? '—'
        : `${n(s.summary.cache_hit_rate * 100, 1)} %`,
      s.objectives
        .map((o) => `${esc(o.objective)} ${n(o.observed, 1)} [${n(o.lower, 1)}, ${n(o.upper, 1)}]`)
        .join('<br>'),
      esc(s.reason ?? ''),
      `<a href="${esc(encodeURI(`${s.dir.split('/').at(-1)}/report.html`))}">report</a>`,
    ]
    return `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`
  })
  const intro = `<p><b>Capacity: ${n(r.capacity, 2)} req/s</b> · bracket [${n(lo, 2)}, ${hi === null ? '—' : n(hi, 2)}] ·
limiting objective: ${esc(r.limitingObjective ?? '—')} · ${r.decidedWithConfidence ? 'decided with confidence' : 'not decided with confidence'} ·
ended: ${esc(r.ended)}</p>${
    r.confirmation === undefined
      ? ''
      : `<p class="${r.confirmation.holds === true ? 'pass' : 'fail'}"><b>${
          r.confirmation.holds === null ? '?' : r.confirmation.holds ? '✓' : '✗'
        } Confirmation:</b> ${n(r.confirmation.durationS)} s at ${n(r.confirmation.rate, 3)} req/s (${
          r.confirmation.fraction
        } × the capacity) ${
          r.confirmation.holds === null
            ? `could not be judged, twice: ${esc(r.confirmation.reason ?? '')}; the capacity is not confirmed`
            : r.confirmation.holds
              ? 'met the SLO'
              : 'did not meet the SLO: the capacity does not hold'
        }${
          r.confirmation.invalidBefore === undefined
            ? ''
            : ` (sent again: the first try could not be judged, ${esc(r.confirmation.invalidBefore.reason)})`
        } (the last row below).</p>`
  }
<p>Each step runs ${n(r.search.stepDurationS)} s of arrivals (longer where the SLO's percentiles need more samples);
the first ${n(r.rampS)} s of each are left out of its statistics. Whiskers are ${r.search.confidence * 100} % intervals
(bootstrap for percentiles, Wilson for rates); a hollow point did not pass.</p>`
  const table = `<table><thead><tr>${[
    'step',
    'phase',
    'req/s',
    'seconds',
    'requests',
    'decision',
    'success',
    'completed req/s',
    'cache hits',
    'objectives: observed [interval]',
    'note',
    '',
  ]
    .map((h) => `<th>${h}</th>`)
    .join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`
  return chartPage(`Capacity search`, intro, `${charts.join('\n')}\n<h2>Steps</h2>${table}`)
}

import { type ChartSeries, chartPage, escapeHtml as esc, PALETTE, svgChart } from '../report/svg-chart.ts'
import { normalizeSpec, type SloSpec } from '../slo/slo-spec.ts'
import { type HistoryCheck, seriesGroups } from './check-history.ts'
import type { HistoryView, RecordedRun } from './history-store.ts'
import { newestRunBand } from './judge-series.ts'

/**
 * history.html: per workload and metric, the series over its runs (oldest first), each regime between change points
 * in its own colour with the change's run shaded, the SLO's limit where the runs had one, every point a link to its
 * run's report; then the runs, with their labels.
 */
export function historyHtml(
  store: HistoryView,
  check: HistoryCheck,
  metrics: readonly string[],
  options: { anyEnvironment?: boolean } = {},
): string {
  const runs = store.runs()
  const charts: string[] = []
  // the series the check judged (workload and, unless anyEnvironment, server version): change positions are theirs
  for (const group of seriesGroups(store, options).values()) {
    const workload = (group[0] as RecordedRun).fingerprint
    const slo = sloOf(store, group.at(-1) as RecordedRun)
    for (const metric of metrics) {
      const values = store.metric(metric, group)
      const points = group.flatMap((r, i) => (values[i] === undefined ? [] : [{ run: r, value: values[i] as number }]))
      if (points.length === 0) continue
      const changes = check.changes.filter(
        (c) => c.metric === metric && c.workload === workload && group.some((r) => r.dir === c.run),
      )
      const cuts = [0, ...changes.map((c) => c.position - 1), points.length]
      const series: ChartSeries[] = cuts.slice(0, -1).map((from, k) => ({
        name: k === 0 ? metric : `after change ${k} (${changes[k - 1]?.kind})`,
        color: PALETTE[k % PALETTE.length] as string,
        points: points.slice(from, cuts[k + 1]).map((p, j) => ({
          x: from + j + 1,
          y: p.value,
          label: `run ${from + j + 1}: ${p.value.toFixed(3)} · ${p.run.startedAt}${
            p.run.labels['commit'] === undefined ? '' : ` · ${p.run.labels['commit'].slice(0, 10)}`
          } · ${p.run.dir}`,
          href: `${encodeURI(p.run.dir)}/report.html`,
        })),
      }))
      const newest = changes.at(-1)
      const limit = slo.find((l) => l.metric === metric)
      // the newest run against the band its regime predicts: outside it (and by the minimum effect) it fails
      const band = newestRunBand(
        points.map((p) => p.value),
        changes.map((c) => c.position - 1),
      )
      const bandLines =
        band === undefined
          ? []
          : [
              { y: band.low, label: `newest run's band (from runs ${band.from + 1}–${band.to}): low` },
              { y: band.high, label: `newest run's band: high` },
            ]
      charts.push(
        svgChart({
          title: `${metric} · workload ${workload} · ${points.length} runs${
            newest === undefined ? '' : ` · newest change: ${newest.kind} at run ${newest.position}`
          }`,
          xLabel: 'run and its commit (oldest first; click a point for its report)',
          xTickLabel: (x) => {
            const commit = Number.isInteger(x) ? points[x - 1]?.run.labels['commit'] : undefined
            return commit === undefined ? String(x) : `${x} · ${commit.slice(0, 7)}`
          },
          yLabel: metric.includes('.') ? `${metric} (ms)` : metric,
          series,
          hLines: [
            ...(limit === undefined ? [] : [{ y: limit.limit, label: `SLO ${metric} ≤ ${limit.limit}` }]),
            ...bandLines,
          ],
          ...(newest === undefined
            ? {}
            : {
                xBand: {
                  from: newest.position - 1,
                  to: newest.position,
                  label: `${newest.kind} (p = ${newest.pValue.toFixed(3)})`,
                },
              }),
        }),
      )
    }
  }
  const rows = runs.map(
    (r, i) =>
      `<tr><td>${i + 1}</td><td>${esc(r.startedAt)}</td><td>${esc(r.fingerprint)}</td><td>${esc(
        Object.entries(r.labels)
          .map(([k, v]) => `${k}=${k === 'commit' ? v.slice(0, 10) : v}`)
          .join(' '),
      )}</td><td><a href="${esc(`${encodeURI(r.dir)}/report.html`)}">${esc(r.dir)}</a></td></tr>`,
  )
  const verdicts = check.verdicts.map(
    (v) =>
      `<li class="${v.verdict === 'regression' ? 'fail' : v.verdict === 'improvement' ? 'pass' : ''}">${esc(
        `${v.metric} (workload ${v.workload}, ${v.runs} runs): ${v.verdict}${
          v.newest === undefined
            ? ''
            : ` at run ${v.newest.position}, ${v.newest.before.toFixed(3)} → ${v.newest.after.toFixed(3)}`
        }`,
      )}</li>`,
  )
  return chartPage(
    'Performance history',
    `<p>${runs.length} runs in ${esc(store.path)}. Change points by E-divisive means with a permutation test (p ≤ 0.01);
each regime between them in its own colour.</p><ul>${verdicts.join('')}</ul>`,
    `${charts.join('\n')}<h2>Runs</h2><table><thead><tr><th>#</th><th>started</th><th>workload</th><th>labels</th><th>folder</th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
  )
}

/** The SLO the newest run of a workload was judged by, as limits per history metric (`ttft.p99` → ms). */
function sloOf(store: HistoryView, run: RecordedRun): Array<{ metric: string; limit: number }> {
  const slo = store.options(run) as { slo?: unknown } | undefined
  if (slo?.slo === undefined) return []
  try {
    return normalizeSpec(slo.slo as SloSpec).flatMap((o) =>
      o.kind === 'duration'
        ? [{ metric: `${o.field}.${o.percentile === undefined ? o.aggregation : `p${o.percentile}`}`, limit: o.limit }]
        : [],
    )
  } catch {
    return []
  }
}

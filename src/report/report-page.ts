/// <reference lib="dom" />
import type uPlotClass from 'uplot'
import type { ReportData } from './report-data.ts'

type UPlot = typeof uPlotClass
type Num = number | null
type Series = uPlotClass.Series
type Options = Omit<uPlotClass.Options, 'title' | 'width' | 'height' | 'series'>

/**
 * The page's own code: it draws the request timeline on a canvas and hands the other charts to uPlot. It runs in
 * the browser, not here: report.html inlines its source (`String(reportPage)`) and calls it with the page's data
 * and uPlot's global, so it may use nothing from this module's scope — only its parameters and the browser's.
 */
export function reportPage(D: ReportData, uPlot: UPlot): void {
  const byId = (id: string): HTMLElement | null => document.getElementById(id)
  const STAGES = [
    ['queued in router', '#9e9e9e', 'arrival', 'send'],
    ['network', '#d9d9d9', 'send', 'created'],
    ['tokenize', '#8e7cc3', 'created', 'qStart'],
    ['queued in server', '#e69138', 'qStart', 'qEnd'],
    ['prefill', '#3c78d8', 'qEnd', 'first'],
    ['decode', '#6aa84f', 'first', 'finish'],
  ] as const
  /** Tick steps for counts: whole numbers only. */
  const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000]
  const PALETTE = ['#3c78d8', '#e69138', '#6aa84f', '#8e7cc3', '#cc0000', '#45818e', '#999999', '#bf9000']
  const colour = (i: number): string => PALETTE[i % PALETTE.length] as string

  function legend(el: HTMLElement): void {
    const item = (name: string, color: string): string => `<span><i style="background:${color}"></i>${name}</span>`
    el.innerHTML = STAGES.map(([name, color]) => item(name, color)).join('') + item('failed', '#cc0000')
  }

  function drawTimeline(canvas: HTMLCanvasElement): void {
    const R = D.requests
    const n = R.id.length
    const width = canvas.parentElement?.clientWidth ?? 800
    const height = Math.min(Math.max(n * 3, 240), 900)
    const ratio = window.devicePixelRatio || 1
    canvas.width = width * ratio
    canvas.height = height * ratio
    canvas.style.width = `${width}px`
    canvas.style.height = `${height}px`
    const ctx = canvas.getContext('2d')
    if (ctx === null) return
    ctx.scale(ratio, ratio)
    const left = 48
    const right = 8
    const top = 8
    const bottom = 24
    const end = Math.max(...R.finish.map((f, i) => f ?? R.arrival[i] ?? 0), 1e-9)
    const x = (t: number): number => left + (t / end) * (width - left - right)
    const rowH = (height - top - bottom) / Math.max(n, 1)
    ctx.fillStyle = '#fff'
    ctx.fillRect(0, 0, width, height)
    for (let i = 0; i < n; i++) {
      const y = top + i * rowH
      const h = Math.max(rowH * 0.8, 0.6)
      for (const [, color, a, b] of STAGES) {
        const t0 = R[a][i] ?? null
        const t1 = R[b][i] ?? null
        if (t0 === null || t1 === null || t1 < t0) continue
        ctx.fillStyle = color
        ctx.fillRect(x(t0), y, Math.max(x(t1) - x(t0), 0.5), h)
      }
      if (R.ok[i] !== true) {
        // a failure is a red bar over its whole time in the system, at least 4 px wide and 3 px high: visible
        const from = x(R.arrival[i] ?? 0)
        const to = x(R.finish[i] ?? R.arrival[i] ?? 0)
        ctx.fillStyle = '#cc0000'
        ctx.fillRect(Math.min(from, to - 4), y, Math.max(to - from, 4), Math.max(h, 3))
      }
    }
    ctx.fillStyle = '#333'
    ctx.font = '11px sans-serif'
    for (let k = 0; k <= 5; k++) {
      const t = (end * k) / 5
      // the last tick ends at the plot's right edge instead of running past it
      ctx.textAlign = k === 0 ? 'left' : k === 5 ? 'right' : 'center'
      ctx.fillText(`${t.toFixed(2)} s`, k === 5 ? width - right : x(t), height - 6)
    }
    ctx.textAlign = 'left'
    ctx.save()
    ctx.translate(12, height / 2)
    ctx.rotate(-Math.PI / 2)
    ctx.fillText('requests by arrival', -50, 0)
    ctx.restore()
    canvas.dataset['drawn'] = String(n)
  }

  function chart(el: HTMLElement, title: string, data: uPlotClass.AlignedData, series: Series[], opts: Options = {}) {
    const width = el.clientWidth || 600
    // a static page: the legend names the series; uPlot's live "Value: --" readouts only appear on hover
    const base: uPlotClass.Options = {
      title,
      width,
      height: 260,
      series: [{}, ...series],
      axes: [{}, {}],
      legend: { live: false },
    }
    return new uPlot({ ...base, ...opts }, data, el)
  }

  function markEvents(u: uPlotClass): void {
    const ctx = u.ctx
    ctx.save()
    ctx.strokeStyle = '#cc0000'
    ctx.fillStyle = '#cc0000'
    ctx.setLineDash([4, 3])
    ctx.font = '11px system-ui, sans-serif'
    for (const e of D.events) {
      const x = Math.round(u.valToPos(e.t, 'x', true))
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue
      ctx.beginPath()
      ctx.moveTo(x, u.bbox.top)
      ctx.lineTo(x, u.bbox.top + u.bbox.height)
      ctx.stroke()
      ctx.fillText(e.what, x + 3, u.bbox.top + 12)
    }
    ctx.restore()
    u.root.dataset['events'] = String(D.events.length)
  }

  /** A time chart: seconds since the start on x, the failure schedule's steps drawn on it as labelled lines. */
  function timeChart(
    el: HTMLElement,
    title: string,
    data: uPlotClass.AlignedData,
    series: Series[],
    yLabel: string,
    opts: Options = {},
  ): void {
    chart(el, title, data, series, {
      scales: { x: { time: false } },
      axes: [{ label: 'seconds since start' }, { label: yLabel }],
      ...opts,
      hooks: { draw: [markEvents] },
    })
  }

  /** One line per key of each group (solid, then dashed, …), on one time chart. */
  function perKeyChart(
    el: HTMLElement,
    title: string,
    t: number[],
    groups: Array<{ values: Record<string, Num[]>; suffix?: string }>,
    yLabel: string,
    opts: Options = {},
  ): void {
    const dashes = [undefined, [5, 4], [2, 3]]
    const data: Num[][] = [t]
    const series: Series[] = []
    groups.forEach((g, gi) => {
      Object.keys(g.values).forEach((k, i) => {
        data.push(g.values[k] ?? [])
        const dash = dashes[gi % dashes.length]
        series.push({ label: k + (g.suffix ?? ''), stroke: colour(i), width: 1.5, ...(dash ? { dash } : {}) })
      })
    })
    timeChart(el, title, data as uPlotClass.AlignedData, series, yLabel, opts)
    el.dataset['series'] = String(series.length)
  }

  function notReported(el: HTMLElement, what: string): void {
    const p = document.createElement('p')
    p.className = 'not-reported'
    p.textContent = `${what}: not reported by the server`
    el.appendChild(p)
  }

  function kvChart(el: HTMLElement | null): void {
    const K = D.kv
    if (el === null) return
    if (K === null) {
      notReported(el, 'KV cache usage and prefix cache hit rate (/metrics)')
      return
    }
    const pct = (o: Record<string, Num[]>): Record<string, Num[]> =>
      Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v.map((x) => (x === null ? null : 100 * x))]))
    perKeyChart(
      el,
      'KV cache usage (solid) and prefix cache hit rate (dashed) per worker, %',
      K.t,
      [
        { values: pct(K.usage), suffix: ' KV usage' },
        { values: pct(K.hitRate), suffix: ' cache hit' },
      ],
      '%',
      { scales: { x: { time: false }, y: { range: [0, 100] } } },
    )
  }

  function routerChart(el: HTMLElement | null): void {
    const R = D.router
    if (el === null || R === null) return
    perKeyChart(
      el,
      "The router's in-flight requests per worker (solid) and worker health (dashed, 1 healthy)",
      R.t,
      [
        { values: R.active, suffix: ' in flight' },
        { values: R.health, suffix: ' health' },
      ],
      'requests',
    )
  }

  function gpuCharts(el: HTMLElement | null): void {
    const G = D.gpus
    if (el === null || G === null) return
    const parts = [
      ['util', 'GPU utilisation (%)', '%'],
      ['memory', 'GPU memory used (MiB)', 'MiB'],
      ['power', 'GPU power (W)', 'W'],
    ] as const
    for (const [key, title, unit] of parts) {
      const div = document.createElement('div')
      div.className = 'chart'
      div.id = `gpu-${key}`
      el.appendChild(div)
      perKeyChart(div, title, G.t, [{ values: G[key] }], unit)
    }
  }

  function percentileChart(el: HTMLElement | null, title: string, wanted: string[]): void {
    if (el === null) return
    const names = wanted.filter((k) => D.percentiles.series[k] !== undefined)
    const column = (k: string): Num[] => D.percentiles.series[k] ?? []
    // a tail 10x the median flattens everything below it on a linear axis: then the axis is logarithmic (a zero,
    // which a log axis cannot place, is left out of the line)
    const known = column(names[0] ?? '').filter((v): v is number => v !== null && v > 0)
    const median = known[Math.floor(known.length / 2)] ?? 0
    const log = median > 0 && Math.max(...known) >= 10 * median
    const data = names.map((k) => column(k).map((v) => (log && v !== null && v <= 0 ? null : v)))
    // the SLO's limits on these columns, each a dashed red line across every percentile
    const limits = D.sloLines.filter((l) => names.includes(l.field))
    const lines = limits.map((l) => D.percentiles.p.map(() => l.limit))
    chart(
      el,
      title + (log ? ' (log axis: the tail is over 10x the median)' : ''),
      [D.percentiles.p, ...data, ...lines] as uPlotClass.AlignedData,
      [
        ...names.map((k, i) => ({ label: k, stroke: colour(i), width: 1.5 })),
        ...limits.map((l) => ({ label: l.label, stroke: '#cc0000', width: 1.5, dash: [6, 4] })),
      ],
      {
        scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
        axes: [{ label: 'percentile' }, { label: log ? 'ms (log)' : 'ms' }],
      },
    )
  }

  function overTimeChart(el: HTMLElement | null): void {
    if (el === null) return
    const queue = D.overTime.queueDepth
    const data = [D.overTime.t, D.overTime.concurrency, ...(queue === null ? [] : [queue])]
    const series: Series[] = [
      { label: 'requests in the system', stroke: '#3c78d8', width: 1.5 },
      ...(queue === null ? [] : [{ label: 'waiting in server queues', stroke: '#e69138', width: 1.5 }]),
    ]
    timeChart(el, 'Concurrency and server queue depth', data as uPlotClass.AlignedData, series, 'requests')
    if (queue === null) notReported(el, 'waiting in server queues (needs /generate with --enable-metrics)')
  }

  function serverGaugesChart(el: HTMLElement | null): void {
    if (el === null) return
    const G = D.serverGauges
    if (G === null) {
      notReported(el, 'running and queued requests (/metrics)')
      return
    }
    const names = [...Object.keys(G.running), ...Object.keys(G.queued)]
    const data = [G.t, ...Object.values(G.running), ...Object.values(G.queued)]
    const line = (label: string, i: number, dash?: number[]): Series => ({
      label,
      stroke: colour(i),
      width: 1.5,
      ...(dash ? { dash } : {}),
    })
    const series = [
      ...Object.keys(G.running).map((w, i) => line(`${w} running`, i)),
      ...Object.keys(G.queued).map((w, i) => line(`${w} queued`, i, [5, 4])),
    ]
    timeChart(
      el,
      'Running (solid) and queued (dashed) requests per worker',
      data as uPlotClass.AlignedData,
      series,
      'requests',
    )
    el.dataset['series'] = String(names.length)
  }

  function hostsChart(el: HTMLElement | null): void {
    if (el === null) return
    const idx = D.hosts.name.map((_, i) => i)
    const bars = uPlot.paths.bars?.({ size: [0.6, 80] })
    const name = (s: number): string => (Number.isInteger(s) ? (D.hosts.name[s] ?? '') : '')
    chart(
      el,
      'Requests per worker',
      [idx, D.hosts.count],
      [{ label: 'requests', stroke: '#6aa84f', fill: '#6aa84f88', ...(bars ? { paths: bars } : {}) }],
      // bars start at zero, so their heights compare; a few ticks, not one per request
      {
        scales: {
          x: { time: false, range: [-0.5, idx.length - 0.5] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
        },
        axes: [
          { values: (_u, splits) => splits.map(name), splits: () => idx },
          { label: 'requests', incrs: COUNT_STEPS },
        ],
      },
    )
  }

  function cacheOverTimeChart(el: HTMLElement | null): void {
    const c = D.summary.conversations
    if (el === null || c === undefined || c === null) return
    const points = c.cache_hit_rate_over_time
    chart(
      el,
      'Prefix cache hit rate over time (cached / prompt tokens of the requests arriving each second)',
      [points.map((p) => p[0]), points.map((p) => 100 * p[1])],
      [{ label: 'cache hit rate (%)', stroke: '#6aa84f', width: 1.5 }],
      {
        scales: { x: { time: false }, y: { range: [0, 100] } },
        axes: [{ label: 'seconds since start' }, { label: '%' }],
      },
    )
    el.dataset['points'] = String(points.length)
  }

  const legendEl = byId('legend')
  if (legendEl !== null) legend(legendEl)
  const timeline = byId('timeline')
  if (timeline instanceof HTMLCanvasElement) drawTimeline(timeline)
  for (const c of D.percentiles.charts) percentileChart(byId(c.id), c.title, c.metrics)
  overTimeChart(byId('overtime'))
  serverGaugesChart(byId('server-gauges'))
  hostsChart(byId('hosts'))
  kvChart(byId('kv'))
  routerChart(byId('router-view'))
  gpuCharts(byId('gpus'))
  cacheOverTimeChart(byId('cache-over-time'))
}

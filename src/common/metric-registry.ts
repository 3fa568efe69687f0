/**
 * Every per-request latency metric the product shows, in one place: the summary, the run's headline block, the
 * end-of-run table, compare, the history's kept samples and report.html's percentile charts iterate this list, so a
 * new metric is an entry here and its formula in `record/request-record.ts` (buildRecord).
 *
 * A metric is a requests.csv column in seconds (or seconds per token) and a summary distribution in ms (or ms per
 * token). Every metric here is better lower.
 */
export interface MetricSpec {
  /** Its requests.csv column and its key in summary.json's `metrics`. */
  readonly column: string
  /** A column this registry adds after the design's and the first release's (written last, read as unknown before). */
  readonly added?: true
  /** Its unit in summaries, tables and charts. */
  readonly unit: 'ms' | 'ms/token'
  /** Its line in `run`'s headline block (vllm bench serve's), where it has one: the words before mean/median/p99. */
  readonly headline?: string | ((ttftSource: string | null | undefined) => string)
  /** Its columns in the end-of-run table: the header and percentile; `optional` columns hide when every row is empty. */
  readonly table?: ReadonlyArray<{ header: string; p: 50 | 99; optional?: 'empty' | 'empty-or-zero' }>
  /** Where it is missing, the table reads this column instead (a run whose TTFT is only the client's). */
  readonly tableFallback?: string
  /** compare shows its p50/p90/p99 (where both runs have it). */
  readonly compare?: true
  /** The history keeps its per-request samples (for the bootstrap of `history check`), not only its percentiles. */
  readonly historySamples?: true
  /** The report.html chart that draws it by percentile (PERCENTILE_CHARTS' id). */
  readonly chart?: string
}

/** report.html's percentile charts, in the page's order. */
export const PERCENTILE_CHARTS: ReadonlyArray<{ id: string; title: string }> = [
  { id: 'percentiles', title: 'Time to first token and its stages, by percentile (ms)' },
  { id: 'percentiles-e2e', title: 'End-to-end latency by percentile (ms)' },
  { id: 'percentiles-token', title: 'Per-token latency by percentile (ms)' },
  { id: 'percentiles-ttft-per-token', title: 'Time to first token per prompt token, by percentile (ms/token)' },
]

export const METRICS = [
  {
    column: 'ttft',
    unit: 'ms',
    headline: (source) => (source !== 'client' ? 'TTFT (server first token)' : 'TTFT (client first token)'),
    table: [
      { header: 'ttft p50', p: 50 },
      { header: 'ttft p99', p: 99 },
    ],
    tableFallback: 'client_ttft',
    compare: true,
    historySamples: true,
    chart: 'percentiles',
  },
  { column: 'client_ttft', unit: 'ms', compare: true, chart: 'percentiles' },
  { column: 'ttfo', unit: 'ms', compare: true },
  {
    column: 'tpot',
    unit: 'ms',
    headline: 'TPOT (excl. 1st token)',
    table: [{ header: 'tpot p50', p: 50, optional: 'empty' }],
    compare: true,
    historySamples: true,
    chart: 'percentiles-token',
  },
  { column: 'itl_mean', unit: 'ms', headline: 'ITL (per-request mean)', compare: true },
  {
    column: 'total_latency',
    unit: 'ms',
    headline: 'E2E latency',
    table: [{ header: 'e2e p99', p: 99 }],
    compare: true,
    historySamples: true,
    chart: 'percentiles-e2e',
  },
  {
    column: 'pure_queue_time',
    unit: 'ms',
    table: [{ header: 'q p99', p: 99 }],
    compare: true,
    historySamples: true,
    chart: 'percentiles',
  },
  { column: 'queue_time_in_server', unit: 'ms', compare: true },
  {
    column: 'client_queue_time',
    unit: 'ms',
    headline: 'Client queue time (slot wait)',
    table: [{ header: 'wait p99', p: 99, optional: 'empty-or-zero' }],
    historySamples: true,
  },
  { column: 'prefill_time', unit: 'ms', chart: 'percentiles' },
  { column: 'queue_time_in_router', unit: 'ms', chart: 'percentiles' },
  { column: 'itl_max', unit: 'ms', chart: 'percentiles-token' },
  {
    // TTFT divided by the prompt's tokens: a prefill's speed, comparable across prompt lengths (long prompts no
    // longer read as slow first tokens)
    column: 'ttft_per_input_token',
    added: true,
    unit: 'ms/token',
    headline: 'TTFT per prompt token',
    table: [{ header: 'ttft/tok p50', p: 50, optional: 'empty' }],
    compare: true,
    historySamples: true,
    chart: 'percentiles-ttft-per-token',
  },
  {
    // a reasoning model's TPOT over its answer alone, after the first answer token (AIPerf's output token latency
    // with reasoning excluded): a long think no longer averages into the answer's pace
    column: 'tpot_answer',
    added: true,
    unit: 'ms',
    compare: true,
    historySamples: true,
    chart: 'percentiles-token',
  },
  {
    // from the client's send to its request's headers written on a connection: ~0 on one already open, a TCP
    // handshake on a new one, and a second or more where the server's listen queue was full and the kernel sent the
    // SYN again (llama.cpp's HTTP server listens with a queue of 5; 128 overflows in 190 s of calibrate on an H100).
    // TTFT and the latencies measured from the send hold it
    column: 'connect_wait',
    added: true,
    unit: 'ms',
    compare: true,
  },
] as const satisfies readonly MetricSpec[]

const SPECS: readonly MetricSpec[] = METRICS

/** The names of the columns this registry adds. */
export type AddedMetricColumn = Extract<(typeof METRICS)[number], { added: true }>['column']

/** The columns this registry adds to requests.csv (after every column of the first release). */
export const ADDED_METRIC_COLUMNS = METRICS.flatMap((m): AddedMetricColumn[] =>
  'added' in m && m.added === true ? [m.column as AddedMetricColumn] : [],
)

/** The metrics compare shows, in this order. */
export const COMPARED_METRICS: readonly string[] = SPECS.filter((m) => m.compare).map((m) => m.column)

/** The metrics whose per-request samples the history keeps. */
export const SAMPLED_METRICS: readonly string[] = SPECS.filter((m) => m.historySamples).map((m) => m.column)

/** The metrics report.html draws by percentile. */
export const CHARTED_METRICS: readonly string[] = SPECS.filter((m) => m.chart !== undefined).map((m) => m.column)

/** The end-of-run table's metric columns, in order: the header, the metric, its percentile. */
export const TABLE_METRIC_COLUMNS = SPECS.flatMap((m) =>
  (m.table ?? []).map((t) => ({ ...t, column: m.column, fallback: m.tableFallback, unit: m.unit })),
)

/** A metric's unit (ms where the column is not one of the registry's). */
export const unitOf = (column: string): MetricSpec['unit'] => SPECS.find((m) => m.column === column)?.unit ?? 'ms'

/**
 * A metric's value as tables and lines show it: ms to the given decimals (as they always were), a time per token to
 * three significant digits (25 µs a token is 0.025 ms/token: two decimals would read it as 0.03).
 */
export const shownValue = (unit: MetricSpec['unit'], v: number, decimals: number): string =>
  unit === 'ms' || v === 0 ? v.toFixed(decimals) : String(Number(v.toPrecision(3)))

/** The compact summary's key for a metric's percentile (`ttft_p99`): the end-of-run table's and runs.json's. */
export const tableKey = (column: string, p: number): string => `${column}_p${p}`

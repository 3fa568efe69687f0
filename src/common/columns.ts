import { ADDED_METRIC_COLUMNS, type AddedMetricColumn } from './metric-registry.ts'

/** The design's columns, in order; other code and users' scripts rely on these names and this order. */
export const DESIGN_COLUMNS = [
  'req_id',
  'success',
  'error',
  'host',
  'has_generated_text',
  'input_length',
  'expected_output_length',
  'actual_prompt_tokens',
  'actual_output_tokens',
  'actual_total_tokens',
  'output_tokens_from_trace',
  'decode_length',
  'arrival_time',
  'router_send_time',
  'server_created_time',
  'queue_time_start',
  'queue_time_end',
  'server_first_token_time',
  'finish_time',
  'server_latency',
  'total_latency',
  'ttft',
  'queue_time_in_router',
  'queue_time_in_server',
  'tokenize_time',
  'pure_queue_time',
] as const

/** Extras after the design's columns. */
export const EXTRA_COLUMNS = [
  'client_ttft',
  'prefill_time',
  'network_time',
  'tpot',
  'itl_mean',
  'itl_max',
  'decode_time',
  'finish_reason',
  'http_status',
  'error_type',
  'cached_tokens',
  'dispatch_lag',
  'server_e2e_latency',
  'chunks',
  'server_timestamps',
  'requested_prompt_tokens',
  'warning',
  'session_id',
  'turn',
  'client_queue_time',
  'ttfo',
  'reasoning_tokens',
  'spec_accept_length',
  'spec_acceptance',
] as const

/** Columns added after the first release: a folder written before them lacks them, and reads them as unknown. */
export const LATER_COLUMNS: readonly string[] = [
  'client_queue_time',
  'ttfo',
  'reasoning_tokens',
  'spec_accept_length',
  'spec_acceptance',
  ...ADDED_METRIC_COLUMNS,
]

export const CSV_COLUMNS: ReadonlyArray<
  (typeof DESIGN_COLUMNS)[number] | (typeof EXTRA_COLUMNS)[number] | AddedMetricColumn
> = [...DESIGN_COLUMNS, ...EXTRA_COLUMNS, ...ADDED_METRIC_COLUMNS]

/** Duration columns (seconds in the CSV, ms in summaries). */
export const DURATION_COLUMNS = [
  'server_latency',
  'total_latency',
  'ttft',
  'queue_time_in_router',
  'queue_time_in_server',
  'tokenize_time',
  'pure_queue_time',
  'client_ttft',
  'prefill_time',
  'network_time',
  'tpot',
  'itl_mean',
  'itl_max',
  'decode_time',
  'dispatch_lag',
  'server_e2e_latency',
  'client_queue_time',
  'ttfo',
  // every metric the registry adds is one (seconds, or seconds per token, in the CSV)
  ...ADDED_METRIC_COLUMNS,
] as const

export type DurationColumn = (typeof DURATION_COLUMNS)[number]

/** Integer columns: token counts, chunks, the HTTP status. */
export const COUNT_COLUMNS = [
  'input_length',
  'expected_output_length',
  'actual_prompt_tokens',
  'actual_output_tokens',
  'actual_total_tokens',
  'output_tokens_from_trace',
  'decode_length',
  'http_status',
  'cached_tokens',
  'chunks',
  'requested_prompt_tokens',
  'session_id',
  'turn',
  'reasoning_tokens',
] as const

/** Durations are seconds in requests.csv and milliseconds in summaries, objectives, messages and reports. */
export const MS_PER_S = 1000

const DURATIONS = new Set<string>(DURATION_COLUMNS)

/** What a field's CSV value is multiplied by for summaries and objectives: MS_PER_S for durations, else 1. */
export const fieldScale = (field: string): number => (DURATIONS.has(field) ? MS_PER_S : 1)

/** Columns whose cells are not numbers: everything else can carry an objective. */
const TEXT_COLUMNS = [
  'req_id',
  'success',
  'error',
  'host',
  'has_generated_text',
  'finish_reason',
  'error_type',
  'server_timestamps',
  'warning',
] as const

type TextColumn = (typeof TEXT_COLUMNS)[number]

/** requests.csv's numeric columns: what a duration objective of `toMeetSlo` may name. */
export type NumericColumn = Exclude<(typeof CSV_COLUMNS)[number], TextColumn>

export const NUMERIC_COLUMNS = CSV_COLUMNS.filter(
  (c): c is NumericColumn => !(TEXT_COLUMNS as readonly string[]).includes(c),
)

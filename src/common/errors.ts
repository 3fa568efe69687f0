/**
 * Every user-facing failure is an `LlmPerfError` with a stable `code`; match on `code`, not on the class,
 * because two copies of the package in one tree would otherwise fail `instanceof`.
 */
export type LlmPerfErrorCode =
  | 'LLMPERF_INVALID_ARGUMENT'
  | 'LLMPERF_DATASET'
  | 'LLMPERF_SERVER_EXITED'
  | 'LLMPERF_LAUNCH_TIMEOUT'
  | 'LLMPERF_INVALID_THRESHOLD'
  | 'LLMPERF_SLO_UNJUDGEABLE'
  | 'LLMPERF_WRITE'
  | 'LLMPERF_TOO_LARGE'
  | 'LLMPERF_CALIBRATION'
  | 'LLMPERF_HISTORY_VALUE'
  | 'LLMPERF_HISTORY'
  /** a topology asked for that is not started, not known, or cannot do what was asked (fail an attached worker) */
  | 'LLMPERF_TOPOLOGY'

export class LlmPerfError extends Error {
  readonly code: LlmPerfErrorCode

  constructor(code: LlmPerfErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'LlmPerfError'
    this.code = code
  }
}

/** Bad options: thrown synchronously, before any socket or process exists, listing every problem at once. */
export class InvalidOptionError extends LlmPerfError {
  readonly problems: readonly string[]

  constructor(what: string, problems: readonly string[]) {
    super('LLMPERF_INVALID_ARGUMENT', `Invalid ${what}:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'InvalidOptionError'
    this.problems = problems
  }
}

export class DatasetError extends LlmPerfError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('LLMPERF_DATASET', message, options)
    this.name = 'DatasetError'
  }
}

/** A launched server exited (or never became ready); carries what a user needs to see why. */
export class ServerStartError extends LlmPerfError {
  readonly exitCode: number | undefined
  readonly logTail: readonly string[]
  readonly logFile: string | undefined

  constructor(
    code: 'LLMPERF_SERVER_EXITED' | 'LLMPERF_LAUNCH_TIMEOUT',
    message: string,
    details: { exitCode?: number | undefined; logTail: readonly string[]; logFile?: string | undefined },
  ) {
    const tail =
      details.logTail.length > 0
        ? `\n--- last ${details.logTail.length} log lines ---\n${details.logTail.join('\n')}`
        : ''
    super(code, `${message}${tail}`)
    this.name = 'ServerStartError'
    this.exitCode = details.exitCode
    this.logTail = details.logTail
    this.logFile = details.logFile
  }
}

/**
 * An objective that cannot be judged (too few samples, a metric the server did not report, an invalid run,
 * a baseline that cannot be read): it fails whether or not `.not` is used.
 */
export class SloUnjudgeableError extends LlmPerfError {
  constructor(message: string) {
    super('LLMPERF_SLO_UNJUDGEABLE', message)
    this.name = 'SloUnjudgeableError'
  }
}

export class InvalidThresholdError extends LlmPerfError {
  constructor(message: string) {
    super('LLMPERF_INVALID_THRESHOLD', message)
    this.name = 'InvalidThresholdError'
  }
}

// first: on too old a Node, one clear line and exit before anything else loads
import './node-guard.ts'

export {
  type CalibratedProfile,
  type CalibrateOptions,
  calibrateServer,
} from './calibrate/calibrate-server.ts'
export { type ValidateOptions, type Validation, validateProfile } from './calibrate/validate-profile.ts'
export type { CapacityOptions, SearchOptions } from './capacity/capacity-options.ts'
export { findCapacity } from './capacity/find-capacity.ts'
export type { CapacityResult, CapacityStep, SweepPoint, SweepPoints, SweepResult } from './capacity/results.ts'
export type { ObjectiveVerdict } from './capacity/step-verdict.ts'
export { sweep } from './capacity/sweep.ts'
export { ArtifactWriteError } from './common/artifact-file.ts'
export { CSV_COLUMNS, DESIGN_COLUMNS, EXTRA_COLUMNS } from './common/columns.ts'
export type { LlmPerfErrorCode } from './common/errors.ts'
export {
  DatasetError,
  InvalidOptionError,
  InvalidThresholdError,
  LlmPerfError,
  ServerStartError,
  SloUnjudgeableError,
} from './common/errors.ts'
export type { BenchOptions } from './executors/bench-options-schema.ts'
export type { BenchTarget } from './load/bench-target.ts'
export type { DatasetOptions } from './options/dataset-options.ts'
export type { ProgressSnapshot } from './options/progress-snapshot.ts'
export { type LaunchedTopology, launchTopology } from './plugin/launch-topology.ts'
export type { LlmPerfContext } from './plugin/provided-context.ts'
export { inject, test } from './plugin/test-api.ts'
export type { RequestRecord } from './record/request-record.ts'
export { benchRequests } from './run/bench-requests.ts'
export type { SloOptions } from './slo/evaluate-slo.ts'
export { evaluateSlo } from './slo/evaluate-slo.ts'
export type { DurationObjectives, RateObjectives, SloSpec } from './slo/slo-spec.ts'
export type { BenchRun, BenchSummary } from './summarise/bench-run.ts'
export type { Distribution } from './summarise/distribution.ts'
export type { RunSummary } from './summarise/run-summary.ts'
export { percentileSorted } from './summarise/statistics.ts'
export type { TopologyInfo } from './topology/started-topology.ts'

import './matchers/matchers.ts'
import './plugin/task-meta.ts'

export { startRouter } from './plugin/remote-router.ts'

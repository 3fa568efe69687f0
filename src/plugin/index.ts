export { perfProject } from './perf-project.ts'
export type { PerfOptions, TopologyOptions } from '../topology/topology-options.ts'
export type { LlmPerfContext } from './provided-context.ts'
export { ENGINE_ENV } from './engine-override.ts'

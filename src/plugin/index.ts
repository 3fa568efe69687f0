// first: on too old a Node, one clear line and exit before anything else loads
import '../node-guard.ts'

export type { PerfOptions, TopologyOptions } from '../topology/topology-options.ts'
export { ENGINE_ENV } from './engine-override.ts'
export { perfProject } from './perf-project.ts'
export type { LlmPerfContext } from './provided-context.ts'

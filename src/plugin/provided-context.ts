import type { TopologyInfo } from '../topology/started-topology.ts'
import type { ResolvedPerfOptions } from '../topology/topology-options.ts'

/** What globalSetup hands to tests through `inject('llmPerf')`. */
export interface LlmPerfContext {
  topologies: Record<string, TopologyInfo>
  /** Configured topologies this run did not start: no selected test file names them. */
  unstarted?: string[]
  artifactsDir: string
  control?: { url: string; token: string }
  /** perfProject({ invalidRuns }): what a test whose run is invalid does. @default 'skip' */
  invalidRuns?: 'skip' | 'retry' | 'fail'
  /** perfProject({ history }): where each valid run is recorded, with which labels. */
  history?: { db: string; labels: Record<string, string> }
}

declare module 'vitest' {
  interface ProvidedContext {
    llmPerf: LlmPerfContext
    llmPerfOptions: ResolvedPerfOptions
  }
}

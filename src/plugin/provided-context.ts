import type { TopologyInfo } from '../topology/started-topology.ts'
import type { ResolvedPerfOptions } from '../topology/topology-options.ts'

/** What globalSetup hands to tests through `inject('llmPerf')`. */
export interface LlmPerfContext {
  topologies: Record<string, TopologyInfo>
  artifactsDir: string
  control?: { url: string; token: string }
}

declare module 'vitest' {
  interface ProvidedContext {
    llmPerf: LlmPerfContext
    llmPerfOptions: ResolvedPerfOptions
  }
}

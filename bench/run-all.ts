import { chunkCostBench } from './chunk-cost.bench.ts'
import { loadGeneratorBench } from './load-generator.bench.ts'
import { simulatorBench } from './simulator.bench.ts'
import { simulatorCpuBench } from './simulator-cpu.bench.ts'

/** `npm run bench`: prints figures; nothing here asserts (timing claims are not tests). */
const print = (title: string, figures: Record<string, string>): void => {
  const width = Math.max(...Object.keys(figures).map((k) => k.length))
  process.stdout.write(
    `\n${title}\n${Object.entries(figures)
      .map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)
      .join('\n')}\n`,
  )
}

print(
  'Load generator: each figure from a fresh plain `node` against a zero-latency streaming server (own process)',
  await loadGeneratorBench(),
)
print(
  `Client CPU a chunk at 100 req/s × 128 tokens against one simulated worker on the same machine, beside its floors (issue 35; median of 3 fresh plain \`node\`)`,
  await chunkCostBench(),
)
print(
  'Simulator: ~600 concurrent streams on one sim-server process (load from one process, probes from another; same host)',
  await simulatorBench(),
)
print(
  'Simulator throughput: CPU a streamed chunk, and chunks a second at capacity (issue 22; /proc CPU times, all threads)',
  await simulatorCpuBench(),
)

// issue 35's figures for a host with cores to spare: each script says it skipped where there are fewer than 16
process.stdout.write('\nLoad engine and router on a 16-core host (bench/device/load-cores.sh, router-cores.sh)\n')
await import('./load-cores.bench.ts')
await import('./router-cores.bench.ts')

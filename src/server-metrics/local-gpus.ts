/** How long nvidia-smi gets to list the GPUs before a run goes on without them. */
const LIST_TIMEOUT_MS = 5000

/**
 * The GPUs of this host, as nvidia-smi lists them (`--query-gpu=index`): what a run samples unasked where
 * nvidia-smi answers (AIPerf samples GPU telemetry in every run). None where nvidia-smi is missing, fails or says
 * nothing it can read: no figure stands in for a GPU nobody read.
 */
export async function localGpus(signal?: AbortSignal): Promise<number[]> {
  // loaded here, not with the module: a run that is not asked to list GPUs does not load execa (~0.13 CPU-s)
  const { execa } = await import('execa')
  const r = await execa('nvidia-smi', ['--query-gpu=index', '--format=csv,noheader'], {
    reject: false,
    timeout: LIST_TIMEOUT_MS,
    stdin: 'ignore',
    ...(signal === undefined ? {} : { cancelSignal: signal }),
  })
  if (r.failed || typeof r.stdout !== 'string') return []
  return r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^\d+$/u.test(l))
    .map(Number)
}

import { execFile } from 'node:child_process'

/** How long nvidia-smi gets to list the GPUs before a run goes on without them. */
const LIST_TIMEOUT_MS = 5000

/**
 * The GPUs of this host, as nvidia-smi lists them (`--query-gpu=index`): what a run samples unasked where
 * nvidia-smi answers (AIPerf samples GPU telemetry in every run). None where nvidia-smi is missing, fails or says
 * nothing it can read: no figure stands in for a GPU nobody read. Node's own execFile, not execa: every run lists
 * them, and loading execa cost each run ~0.1 CPU-s (a one-request run's CPU profile) for one short command.
 */
export function localGpus(signal?: AbortSignal): Promise<number[]> {
  return new Promise((resolve) => {
    execFile(
      'nvidia-smi',
      ['--query-gpu=index', '--format=csv,noheader'],
      { timeout: LIST_TIMEOUT_MS, ...(signal === undefined ? {} : { signal }) },
      (err, stdout) => {
        if (err !== null) return resolve([])
        resolve(
          stdout
            .split('\n')
            .map((l) => l.trim())
            .filter((l) => /^\d+$/u.test(l))
            .map(Number),
        )
      },
    ).stdin?.end()
  })
}

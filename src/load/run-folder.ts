import { join } from 'node:path'
import { ArtifactWriteError, ensureDir, removeStale, writeArtifact } from '../common/artifact-file.ts'

/** The files a run writes into its folder. */
export const RUN_FILES = ['requests.csv', 'summary.json', 'report.html', 'server-metrics.csv'] as const

/**
 * A run owns the files it writes: the folder is made (or the reason it cannot be is one error), and what a
 * previous run left under those names is removed, so no stale server-metrics.csv sits beside new files. Other
 * files in the folder are left alone.
 */
export function claimRunFolder(dir: string): void {
  ensureDir(dir)
  removeStale(dir, RUN_FILES)
}

/**
 * The run's closing files, each whole or not at all (temporary name, then rename). Every file is tried; the
 * first failure (with any earlier one from the run's own writers) is returned for the run to throw.
 */
export function writeClosingFiles(
  files: ReadonlyArray<{ path: string; text: () => string }>,
  earlier: ReadonlyArray<ArtifactWriteError | undefined>,
): ArtifactWriteError | undefined {
  let failure = earlier.find((f) => f !== undefined)
  for (const f of files) {
    try {
      writeArtifact(f.path, f.text())
    } catch (err) {
      failure ??= err instanceof ArtifactWriteError ? err : new ArtifactWriteError(f.path, err)
    }
  }
  return failure
}

export const runFile = (dir: string, name: (typeof RUN_FILES)[number]): string => join(dir, name)

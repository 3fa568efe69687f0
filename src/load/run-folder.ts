import { join } from 'node:path'
import { ArtifactWriteError, ensureDir, removeStale, writeArtifact } from '../common/artifact-file.ts'

/** The files a run writes into its folder. */
export const RUN_FILES = ['requests.csv', 'summary.json', 'report.html', 'server-metrics.csv'] as const

/** The run's folder is made before anything else, or the reason it cannot be is one error: nothing is removed yet. */
export function prepareRunFolder(dir: string): void {
  ensureDir(dir)
}

/**
 * A run owns the files it writes: what a previous run left under those names is removed once the new run really
 * starts (its prompts built, its server answering), never before, so a run that fails to start keeps the last one's
 * files; and no stale server-metrics.csv sits beside new files. Other files in the folder are left alone.
 */
export function claimRunFolder(dir: string): void {
  removeStale(dir, RUN_FILES)
}

/**
 * The run's closing files, each whole or not at all (temporary name, then rename). Every file is tried; the
 * first failure (with any earlier one from the run's own writers) is returned for the run to throw.
 */
export function writeClosingFiles(
  files: ReadonlyArray<{ path: string; text: () => string | Iterable<string> }>,
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

import {
  closeSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { LlmPerfError } from './errors.ts'
import { redact, redactBytes } from './redact.ts'

/**
 * A file we could not write (a full disk, a folder we may not write, a path that is a file): the run's rows
 * are kept in memory and, where a run was under way, come with the error as `run`.
 */
export class ArtifactWriteError extends LlmPerfError {
  readonly path: string
  /** The run whose file this was, when the run itself finished (set by the run, typed there). */
  run?: unknown

  constructor(path: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException)?.code
    super('LLMPERF_WRITE', `could not write ${path}: ${code ? `${code} ` : ''}${(cause as Error)?.message ?? cause}`, {
      cause,
    })
    this.name = 'ArtifactWriteError'
    this.path = path
  }
}

/** Makes `dir` (and its parents) or says in one error why it cannot be a run's folder. */
export function ensureDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true })
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('exists and is not a folder'), { code: 'ENOTDIR' })
  } catch (err) {
    throw new ArtifactWriteError(dir, err)
  }
}

/**
 * Writes a whole file, redacted, under a temporary name renamed into place at the end: a reader (or a crash,
 * or a full disk) never sees half of it, and a failure leaves the previous file, if any, as it was.
 */
export function writeArtifact(path: string, text: string | Iterable<string>): void {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}`)
  let fd: number | undefined
  try {
    fd = openSync(tmp, 'w')
    // pieces (a report's data column by column) are redacted and written one at a time, never joined in memory
    for (const piece of typeof text === 'string' ? [text] : text) writeFully(fd, Buffer.from(redact(piece), 'utf8'))
    fsyncSync(fd)
    closeSync(fd)
    fd = undefined
    renameSync(tmp, path)
  } catch (err) {
    if (fd !== undefined) closeSync(fd)
    rmSync(tmp, { force: true })
    throw new ArtifactWriteError(path, err)
  }
}

function writeFully(fd: number, bytes: Buffer): void {
  let at = 0
  // writeSync may write part of a buffer (a nearly full disk) and fail only on the next call
  while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at)
}

/**
 * A file written as the run goes (requests.csv, server-metrics.csv): each piece of text is redacted and written
 * whole, synchronously, or not at all — on a write error the file is cut back to its last whole piece, closed,
 * and the error kept in `failure` for the run to report at its end (the run goes on; its rows stay in memory).
 */
export class AppendFile {
  readonly path: string
  #fd: number | undefined
  #size = 0
  failure: ArtifactWriteError | undefined

  constructor(path: string, header: string) {
    this.path = path
    try {
      this.#fd = openSync(path, 'w')
    } catch (err) {
      this.failure = new ArtifactWriteError(path, err)
      return
    }
    this.append(header)
  }

  /** False once the file has failed (the text was not written). */
  append(text: string): boolean {
    if (this.#fd === undefined) return false
    return this.#write(this.#fd, Buffer.from(redact(text), 'utf8'))
  }

  /** As `append`, for UTF-8 text already encoded: searched for secrets as bytes, decoded only where one occurs. */
  appendBytes(utf8: Uint8Array): boolean {
    if (this.#fd === undefined) return false
    return this.#write(this.#fd, redactBytes(Buffer.from(utf8.buffer, utf8.byteOffset, utf8.byteLength)))
  }

  #write(fd: number, bytes: Buffer): boolean {
    try {
      writeFully(fd, bytes)
      this.#size += bytes.length
      return true
    } catch (err) {
      this.failure = new ArtifactWriteError(this.path, err)
      try {
        ftruncateSync(fd, this.#size)
      } catch {
        // the cut is best effort; the failure is already kept
      }
      this.close()
      return false
    }
  }

  close(): void {
    if (this.#fd === undefined) return
    try {
      closeSync(this.#fd)
    } catch (err) {
      this.failure ??= new ArtifactWriteError(this.path, err)
    }
    this.#fd = undefined
  }
}

/** Removes files a previous run left in `dir` under these names (a run owns the files it writes). */
export function removeStale(dir: string, names: readonly string[]): void {
  for (const name of names) {
    try {
      unlinkSync(join(dir, name))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new ArtifactWriteError(join(dir, name), err)
    }
  }
}

/**
 * A CSV cell a spreadsheet will not run: text starting with =, +, -, @, tab or CR gets a leading `'` (OWASP's
 * advice for CSV injection). Numbers and booleans stay as they are; `unneutralise` undoes it on reading.
 */
export function neutralise(text: string): string {
  return /^[=+\-@\t\r]/u.test(text) ? `'${text}` : text
}

export function unneutralise(text: string): string {
  return /^'[=+\-@\t\r]/u.test(text) ? text.slice(1) : text
}

/**
 * Removes the folders a previous sweep or search left in `dir` under names this one would write (`step-…`,
 * `rate-…`): a reused out-dir then lists only this one's points. Called once the new one really starts; files and
 * folders of other names are left alone.
 */
export function removeStaleFolders(dir: string, owned: RegExp): void {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return
  }
  for (const name of names)
    if (owned.test(name))
      try {
        rmSync(join(dir, name), { recursive: true, force: true })
      } catch (err) {
        throw new ArtifactWriteError(join(dir, name), err)
      }
}

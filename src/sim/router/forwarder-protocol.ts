/** The routes a forwarder thread serves itself; any other goes to the main thread. */
export const DATA_PLANE = new Set(['/generate', '/v1/completions', '/v1/chat/completions'])

/** What a forwarder thread needs to serve the router's port. */
export interface ForwarderData {
  argv: string[]
  /** The router's port; 0 for the first thread to choose one (its siblings then join it). */
  port: number
  host: string
  /** The main thread's own listener on 127.0.0.1, for every route that is not the data plane. */
  adminPort: number
  limitEnabled: boolean
  /** This thread's number, from 1 (the main thread is 0). */
  thread: number
}

/** A forwarder thread to the main thread: one decision asked per request attempt, the rest told. */
export type FromForwarder =
  | { t: 'listening'; port: number }
  /** The thread could not listen on the router's port. */
  | { t: 'failed'; code: string | undefined; message: string }
  | { t: 'pick'; id: number; text: string }
  | { t: 'done'; id: number; ok: boolean | undefined }
  | { t: 'admit'; id: number }
  | { t: 'release'; id: number }
  | { t: 'requested'; method: string; path: string }
  | { t: 'responded'; status: number; errorCode: string }
  | { t: 'retried'; worker: string }
  | { t: 'exhausted' }
  /** Spans the thread was behind, epoch ms: [start, end, start, end, …]. */
  | { t: 'late'; spans: number[] }

/** The main thread's answers. */
export type ToForwarder =
  | { t: 'picked'; id: number; url: string | undefined; linkPath: string | undefined }
  | { t: 'admitted'; id: number; ok: boolean; status: number }

import { subscribe } from 'node:diagnostics_channel'

/** Where a request's headers-written instant goes, and its clock. */
interface Target {
  onWritten: (atMs: number) => void
  nowMs: () => number
}

let dispatching: Target | undefined
const byRequest = new WeakMap<object, Target>()
let subscribed = false

/**
 * Calls `dispatch` (which must create its undici request synchronously, as `Dispatcher.request` does while a
 * connection may still be opened for it), and tells `onWritten` when undici writes that request's headers on a
 * socket: the wait for a connection. On llama.cpp's server, whose HTTP listen queue holds 5, a connection whose SYN the
 * full queue dropped is made a second later (its kernel's first retry), and the request's TTFT holds that second.
 * A request the pool queued before making it (no connection free under its limit) is not told: unknown, not zero.
 */
export function whileDispatching<T>(target: Target, dispatch: () => T): T {
  if (!subscribed) {
    subscribed = true
    // one subscription a thread, for every request after it; undici publishes only while someone listens
    subscribe('undici:request:create', (m) => {
      if (dispatching !== undefined) byRequest.set((m as { request: object }).request, dispatching)
    })
    subscribe('undici:client:sendHeaders', (m) => {
      const t = byRequest.get((m as { request: object }).request)
      if (t !== undefined) t.onWritten(t.nowMs())
    })
  }
  dispatching = target
  try {
    return dispatch()
  } finally {
    dispatching = undefined
  }
}

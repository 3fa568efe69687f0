import { getOrCreate } from './get-or-create.ts'

/** The callbacks of each signal that `onAbort` was given, behind the one listener it added to that signal. */
const callbacks = new WeakMap<AbortSignal, Set<() => void>>()

/**
 * Calls `fn` once when `signal` aborts; the function returned stops that. However many callbacks a signal is given,
 * it holds one listener: a run's signal is listened to by every request in flight, and Node's EventTarget walks its
 * listeners on each add and remove (a load thread's profile at 100 req/s: 90 ms of addEventListener in 2,000
 * requests). Callbacks run in the order given, as an EventTarget's do.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  const set = getOrCreate(callbacks, signal, () => {
    const fresh = new Set<() => void>()
    signal.addEventListener(
      'abort',
      () => {
        callbacks.delete(signal)
        for (const f of fresh) f()
      },
      { once: true },
    )
    return fresh
  })
  set.add(fn)
  return () => {
    set.delete(fn)
  }
}

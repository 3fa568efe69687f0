/** What a sleeping thread waits on: never notified, so every wait times out. */
const CELL = new Int32Array(new SharedArrayBuffer(4))

/**
 * Blocks this thread for `ms` (fractions of a millisecond too, which setTimeout cannot wait) without using the CPU:
 * Atomics.wait on a cell nobody notifies. The event loop waits as long, so keep `ms` short.
 */
export function sleepThread(ms: number): void {
  Atomics.wait(CELL, 0, 0, ms)
}

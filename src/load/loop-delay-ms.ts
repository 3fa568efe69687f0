/** The event-loop delay monitor's sampling interval (monitorEventLoopDelay's resolution). */
export const LOOP_RESOLUTION_MS = 1

/**
 * A reading of monitorEventLoopDelay (ns) as the delay it says, in ms: the histogram records the whole interval
 * between its timer's callbacks, and the delay is what exceeds the resolution. A histogram with no sample reads
 * NaN or Infinity: no delay.
 */
export const loopDelayMs = (ns: number): number =>
  Number.isFinite(ns) ? Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS) : 0

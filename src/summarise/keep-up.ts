/** A server keeps up only when it completes at least this fraction of what arrives. */
export const KEEP_UP_FRACTION = 0.95

/**
 * Whether a queue's growth over a window says the server did not keep up (GuideLLM's over-saturation): the in-flight
 * count's trend grew by more than (1 − KEEP_UP_FRACTION) of what arrived in the window, and by more than the count's
 * own noise (3 √mean + 2; a steady state's in-flight count varies by about √ of its mean). A capacity step's backlog
 * and `stopOnSaturation`'s live window are judged by this one rule.
 */
export function queueOutgrew(growth: number, arrived: number, meanInFlight: number): boolean {
  const noise = 3 * Math.sqrt(Math.max(1, meanInFlight)) + 2
  return growth > Math.max((1 - KEEP_UP_FRACTION) * arrived, noise)
}

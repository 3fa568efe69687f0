/**
 * The client's validity checks off (dispatch lag, event-loop delay, receive busy), for a test that judges something
 * other than the client's pace: beside other test files on CI's two cores a load thread waits for the CPU (dispatch
 * lag p99 28–44 ms seen), the run is invalid, and an invalid run is neither judged nor recorded.
 */
export const ANY_PACE = { maxDispatchLagMs: Infinity, maxEventLoopDelayMs: Infinity, maxReceiveBusy: Infinity } as const

/** The same as the command line's flags. */
export const ANY_PACE_FLAGS = [
  '--max-dispatch-lag-ms',
  'Infinity',
  '--max-event-loop-delay-ms',
  'Infinity',
  '--max-receive-busy',
  'Infinity',
] as const

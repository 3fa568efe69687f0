/** An error as calibrate prints it: +12.3 %, -4.0 %, and — where it is not a number. */
export const pct = (v: number): string => (Number.isFinite(v) ? `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} %` : '—')

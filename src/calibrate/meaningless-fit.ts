/** A fit's residuals, larger than this share of its points' mean, say the model does not describe the server. */
const MEANINGLESS_RMS = 0.25

/**
 * Why the fit says little about the server, if it does: a TTFT that did not rise from the shortest prompt to the
 * longest (the server did not do the prefills asked for — a cache, a proxy, a server busy with others — and the fit
 * read 1,447 ms + 0 ms/token), or residuals a quarter of the points' size. Said by calibrate and kept in the profile.
 */
export function meaninglessFit(
  prefill: ReadonlyArray<{ prompt_tokens: number; ttft_ms: number; state?: string }>,
  prefillFit: { residualRms: number },
  decode: ReadonlyArray<{ step_ms: number }>,
  decodeFit: { residualRms: number },
): string[] {
  const out: string[] = []
  const found = prefill
    .filter((p) => p.state === undefined || p.state === 'as found')
    .sort((a, b) => a.prompt_tokens - b.prompt_tokens)
  const [shortest, longest] = [found[0], found.at(-1)]
  if (shortest !== undefined && longest !== undefined && longest.prompt_tokens > shortest.prompt_tokens)
    if (longest.ttft_ms <= shortest.ttft_ms)
      out.push(
        `the TTFT did not rise with the prompt (${shortest.ttft_ms.toFixed(1)} ms at ${shortest.prompt_tokens} ` +
          `tokens, ${longest.ttft_ms.toFixed(1)} ms at ${longest.prompt_tokens}): the server did not do the prefills ` +
          'asked for (a prompt cache, a proxy, other load?), so the prefill fit is noise',
      )
  const fits: Array<[string, number, number[]]> = [
    ['prefill', prefillFit.residualRms, prefill.map((p) => p.ttft_ms)],
    ['decode', decodeFit.residualRms, decode.map((d) => d.step_ms)],
  ]
  for (const [name, rms, ys] of fits) {
    if (ys.length === 0) continue
    const rel = rms / Math.max(1e-9, ys.reduce((a, y) => a + y, 0) / ys.length)
    if (rel > MEANINGLESS_RMS)
      out.push(
        `the ${name} fit misses its points by ${(rel * 100).toFixed(0)} % of their mean (rms): it does not describe ` +
          'this server',
      )
  }
  return out
}

import { expect, test } from 'vitest'
import { fitNonNegative } from './least-squares.ts'
import { meaninglessFit } from './meaningless-fit.ts'

const prefillFit = (points: Array<{ prompt_tokens: number; ttft_ms: number }>) =>
  fitNonNegative(
    points.map((p) => [1, p.prompt_tokens]),
    points.map((p) => p.ttft_ms),
  )

const decode = [{ step_ms: 6.1 }, { step_ms: 6.4 }, { step_ms: 7.0 }]
const decodeFit = { residualRms: 0.1 }

test('a TTFT that falls as the prompt grows is said: the fit (1,447 ms + 0 ms/token) is noise', () => {
  // the audit's server: something else answered the prefills (TTFT falling with the prompt), ~480 ms rms
  const points = [
    { prompt_tokens: 32, ttft_ms: 2100 },
    { prompt_tokens: 256, ttft_ms: 1500 },
    { prompt_tokens: 1024, ttft_ms: 1200 },
    { prompt_tokens: 2048, ttft_ms: 990 },
  ]
  const fit = prefillFit(points)
  expect(fit.coef[1]).toBe(0)
  const warnings = meaninglessFit(points, fit, decode, decodeFit)
  expect(warnings[0]).toBe(
    'the TTFT did not rise with the prompt (2100.0 ms at 32 tokens, 990.0 ms at 2048): the server did not do the ' +
      'prefills asked for (a prompt cache, a proxy, other load?), so the prefill fit is noise',
  )
  expect(warnings[1]).toMatch(/^the prefill fit misses its points by \d+ % of their mean \(rms\)/u)
})

test('a fit that describes its points says nothing', () => {
  const points = [32, 256, 1024, 2048].map((n) => ({ prompt_tokens: n, ttft_ms: 20 + 0.05 * n + (n % 3) * 0.2 }))
  expect(meaninglessFit(points, prefillFit(points), decode, decodeFit)).toEqual([])
})

test('a decode fit far from its points is said; only the as-found prefills judge the rise with the prompt', () => {
  const points = [
    { prompt_tokens: 32, ttft_ms: 20, state: 'as found' },
    { prompt_tokens: 2048, ttft_ms: 120, state: 'as found' },
    // a fuller cache's short prompt is slower than an empty one's long prompt: not a fall with the prompt
    { prompt_tokens: 32, ttft_ms: 300, state: 'every slot 1024' },
  ]
  const w = meaninglessFit(points.slice(0, 2), prefillFit(points.slice(0, 2)), decode, { residualRms: 4 })
  expect(w).toEqual(['the decode fit misses its points by 62 % of their mean (rms): it does not describe this server'])
  expect(meaninglessFit(points, { residualRms: 1 }, decode, decodeFit)).toEqual([])
})

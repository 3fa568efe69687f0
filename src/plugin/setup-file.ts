import { expect } from 'vitest'
import { matchers } from '../matchers/matchers.ts'

expect.extend(matchers)

// The pure pieces of create_from_prompt/: PostHog's variant splits, Django's slugify and Python's string repr.
import { describe, expect, it } from 'vitest'
import { promptVariants, pythonRepr, slugify } from '../../src/experiments/create-from-prompt.js'

describe('promptVariants', () => {
  it.each([
    [
      [1, 2],
      ['control', 'test'],
      [50, 50],
    ],
    [
      [4, 1, 2],
      ['control', 'test-1', 'test-2'],
      [33, 33, 34],
    ],
    [
      [1, 2, 3, 4, 5, 6],
      ['control', 'test-1', 'test-2', 'test-3', 'test-4', 'test-5'],
      [16, 16, 16, 16, 16, 20],
    ],
    [
      [1, 2, 3, 4, 5, 6, 7],
      ['control', 'test-1', 'test-2', 'test-3', 'test-4', 'test-5', 'test-6'],
      [14, 14, 14, 14, 14, 14, 16],
    ],
    [
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      ['control', ...Array.from({ length: 9 }, (_, i) => `test-${i + 1}`)],
      Array(10).fill(10),
    ],
  ])('versions %j', (versions, keys, splits) => {
    const variants = promptVariants(versions)
    expect(variants.map((v) => v.key)).toEqual(keys)
    expect(variants.map((v) => v.name)).toEqual(versions.map((v) => `v${v}`))
    expect(variants.map((v) => v.rollout_percentage)).toEqual(splits)
    expect(splits.reduce((a, b) => a + b, 0)).toBe(100)
  })
})

describe('slugify', () => {
  it.each([
    ['my-prompt: v1, v2 (cost)', 'my-prompt-v1-v2-cost'],
    ['Café déjà vu!', 'cafe-deja-vu'],
    ['  --Spaced   out__  ', 'spaced-out'],
    ['snake_case_name', 'snake_case_name'],
    ['日本語', ''],
  ])('%j → %j', (input, slug) => {
    expect(slugify(input)).toBe(slug)
  })
})

describe('pythonRepr', () => {
  it.each([
    ['my-prompt', "'my-prompt'"],
    ["it's", `"it's"`],
    [`both ' and "`, `'both \\' and "'`],
    ['back\\slash', "'back\\\\slash'"],
  ])('%j → %s', (input, repr) => {
    expect(pythonRepr(input)).toBe(repr)
  })
})

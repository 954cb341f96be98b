/** Per-request loads of project metadata (`src/queries/request-memo.ts`): once per loader and project. */
import { describe, expect, it } from 'vitest'
import { createRequestMemo, loadOnce } from '../../src/queries/request-memo.js'

/** A loader that counts its calls per project and answers `<name>-<team>-<n>` (n: the call's number). */
function counting(name: string) {
  const calls = new Map<number, number>()
  const load = async (teamId: number) => {
    const n = (calls.get(teamId) ?? 0) + 1
    calls.set(teamId, n)
    return `${name}-${teamId}-${n}`
  }
  return { load, calls }
}

describe('the request memo', () => {
  it('loads once per project, and every reader gets the same answer', async () => {
    const { load, calls } = counting('cohorts')
    const memo = createRequestMemo()
    const answers = await Promise.all([memo(load, 1), memo(load, 1), memo(load, 2), loadOnce(memo, load, 1)])
    expect(answers).toEqual(['cohorts-1-1', 'cohorts-1-1', 'cohorts-2-1', 'cohorts-1-1'])
    expect(calls.get(1)).toBe(1)
    expect(calls.get(2)).toBe(1)
  })

  it('keeps two loaders apart, and two requests apart', async () => {
    const cohorts = counting('cohorts')
    const actions = counting('actions')
    const first = createRequestMemo()
    const second = createRequestMemo()
    expect(await first(cohorts.load, 5)).toBe('cohorts-5-1')
    expect(await first(actions.load, 5)).toBe('actions-5-1')
    expect(await second(cohorts.load, 5)).toBe('cohorts-5-2')
    expect(await first(cohorts.load, 5)).toBe('cohorts-5-1')
    expect(cohorts.calls.get(5)).toBe(2)
    expect(actions.calls.get(5)).toBe(1)
  })

  it('loads on every call without a memo', async () => {
    const { load, calls } = counting('cohorts')
    expect(await loadOnce(undefined, load, 7)).toBe('cohorts-7-1')
    expect(await loadOnce(undefined, load, 7)).toBe('cohorts-7-2')
    expect(calls.get(7)).toBe(2)
  })

  it('shares a failure within its request only', async () => {
    let calls = 0
    const load = async (_teamId: number): Promise<string> => {
      calls++
      throw new Error(`down ${calls}`)
    }
    const memo = createRequestMemo()
    const failures = await Promise.all([
      memo(load, 1).catch((e: Error) => e.message),
      memo(load, 1).catch((e: Error) => e.message),
    ])
    expect(failures).toEqual(['down 1', 'down 1'])
    await expect(createRequestMemo()(load, 1)).rejects.toThrow('down 2')
  })
})

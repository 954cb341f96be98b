// A screen's view state kept in the URL's search params, so a link reproduces the view: read with `params`,
// change several at once with `update` (null or '' removes a param).
import { useCallback } from 'react'
import { useSearchParams } from 'react-router'

export function useSearchState() {
  const [params, setParams] = useSearchParams()
  const update = useCallback(
    (changes: Record<string, string | number | null | undefined>) => {
      setParams(
        (current) => {
          const next = new URLSearchParams(current)
          for (const [k, v] of Object.entries(changes)) {
            if (v === null || v === undefined || v === '') next.delete(k)
            else next.set(k, String(v))
          }
          return next
        },
        { replace: true },
      )
    },
    [setParams],
  )
  return { params, update }
}

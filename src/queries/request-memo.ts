/**
 * Per-request loads of project metadata. One query request reads the project's cohorts and actions in more than one
 * place — for its cache key and for the compiler — and before this each place read the metadata store again (a
 * static cohort's members each time) and compiled every cohort's definition again. The query service makes one memo
 * per request and hands it to both: a loader (a function of the project id) then runs at most once per project and
 * request, and both readers see the same snapshot, so a cache key cannot describe other definitions than the ones
 * the query was compiled with.
 *
 * Explicit rather than an AsyncLocalStorage: on Node 20 that turns on promise hooks for the whole process, which
 * costs every promise of every request (capture included) more than the loads it saves.
 */

export type RequestMemo = <T>(load: (teamId: number) => Promise<T>, teamId: number) => Promise<T>

/** A fresh memo for one request: keyed by the loader itself and the project (a failure is shared as well). */
export function createRequestMemo(): RequestMemo {
  const loads = new Map<(teamId: number) => Promise<unknown>, Map<number, Promise<unknown>>>()
  return <T>(load: (teamId: number) => Promise<T>, teamId: number): Promise<T> => {
    let byTeam = loads.get(load)
    if (!byTeam) {
      byTeam = new Map()
      loads.set(load, byTeam)
    }
    let loaded = byTeam.get(teamId) as Promise<T> | undefined
    if (!loaded) {
      loaded = load(teamId)
      byTeam.set(teamId, loaded)
    }
    return loaded
  }
}

/** `load(teamId)` through the request's memo when there is one. */
export const loadOnce = <T>(
  memo: RequestMemo | undefined,
  load: (teamId: number) => Promise<T>,
  teamId: number,
): Promise<T> => (memo ? memo(load, teamId) : load(teamId))

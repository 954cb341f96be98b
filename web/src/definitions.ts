// Names the editors suggest: event names and property keys from the project's definitions.
import { useQuery } from '@tanstack/react-query'
import { get, type Page, qs } from './api'

interface Definition {
  name: string
}

export function useEventNames(projectId: number) {
  return useQuery({
    queryKey: ['event-names', projectId],
    queryFn: async ({ signal }) => {
      const page = await get<Page<Definition>>(
        `/api/projects/${projectId}/event_definitions/${qs({ limit: 500 })}`,
        signal,
      )
      return page.results.map((d) => d.name)
    },
    staleTime: 60_000,
  })
}

export function usePropertyNames(projectId: number, type: 'event' | 'person' | 'session' = 'event') {
  return useQuery({
    queryKey: ['property-names', projectId, type],
    queryFn: async ({ signal }) => {
      const page = await get<Page<Definition>>(
        `/api/projects/${projectId}/property_definitions/${qs({ type, limit: 500 })}`,
        signal,
      )
      return page.results.map((d) => d.name)
    },
    staleTime: 60_000,
  })
}

// Who is logged in and which project the screens are about: `GET /api/users/@me/` (null when logged out) and
// the project id from the URL (`/project/:projectId/...`), so a link always reproduces the view.
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useParams } from 'react-router'
import { ApiError, api, get } from './api'

export interface Me {
  uuid: string
  email: string
  first_name: string
  last_name?: string
  is_staff?: boolean
  is_2fa_enabled?: boolean
  team?: { id: number; name: string } | null
  organization?: { id: string; name: string } | null
  [key: string]: unknown
}

export const ME_KEY = ['me'] as const

/** Who is logged in: one definition for the hook and for main.tsx, which asks before the first render. */
export const meQuery = {
  queryKey: ME_KEY,
  queryFn: async () => {
    try {
      return await get<Me>('/api/users/@me/')
    } catch (error) {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return null
      throw error
    }
  },
  staleTime: 60_000,
}

export function useMe() {
  return useQuery(meQuery)
}

/** Logs out and forgets everything cached for the user. */
export function useLogout() {
  const client = useQueryClient()
  return async () => {
    await api('POST', '/api/logout/').catch(() => undefined)
    client.clear()
    window.location.assign('/login')
  }
}

/** The project of the current route. */
export function useProjectId(): number {
  const { projectId } = useParams()
  return Number(projectId)
}

export interface Project {
  id: number
  name: string
  api_token: string
  timezone: string
  [key: string]: unknown
}

export function useProjects() {
  return useQuery({
    queryKey: ['projects'],
    queryFn: async () => (await get<{ results: Project[] }>('/api/projects/')).results,
    staleTime: 60_000,
  })
}

export function useProject() {
  const projectId = useProjectId()
  return useQuery({
    queryKey: ['project', projectId],
    queryFn: () => get<Project>(`/api/projects/${projectId}/`),
    enabled: Number.isFinite(projectId),
  })
}

// Runs before the app's code has loaded (its own small entry in index.html). A link to a new insight carries its
// query in `?q=`: its result is asked for at once, and the screen's and the chart library's code too, while the app's code is still
// on its way, instead of once the app has started, routed and rendered the insight screen. The screen takes the
// answer if the query it would send is exactly this one (`runQueryOrTakeEarly`); otherwise it asks on its own.
import { INSIGHT_KINDS, sourceOf } from './components/insights/nodes'

export interface EarlyQuery {
  projectId: number
  /** The query as JSON: the screen uses the answer only for exactly this query. */
  body: string
  response: Promise<Response>
}

declare global {
  interface Window {
    __burrowEarlyQuery?: EarlyQuery
  }
}

function csrfToken(): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === 'posthog_csrftoken') return decodeURIComponent(v.join('='))
  }
  return undefined
}

function start() {
  const path = /^\/project\/(\d+)\/insights\/new\/?$/.exec(location.pathname)
  const q = new URLSearchParams(location.search).get('q')
  if (!path || !q) return
  let source: ReturnType<typeof sourceOf>
  try {
    source = sourceOf(JSON.parse(q))
  } catch {
    return
  }
  if (!source || !INSIGHT_KINDS.some((k) => k.value === source.kind)) return
  const projectId = Number(path[1])
  const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json' }
  const csrf = csrfToken()
  if (csrf) headers['x-csrftoken'] = csrf
  window.__burrowEarlyQuery = {
    projectId,
    body: JSON.stringify(source),
    response: fetch(`/api/projects/${projectId}/query/`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: source }),
      credentials: 'same-origin',
    }),
  }
  // The screen's code and the chart's (the same modules the router and the chart component load), fetched beside
  // the answer rather than after the session check and the screen's first render.
  for (const load of [() => import('./screens/insights/Insight'), () => import('./components/charts/echarts')]) {
    load().catch(() => undefined)
  }
}

start()

import { type ComponentType, createElement, lazy, Suspense } from 'react'
import { createBrowserRouter, matchPath, Navigate, Outlet, useLocation } from 'react-router'
import { Shell } from './components/Shell'
import { ErrorState, Loading } from './components/States'
import { SCREENS } from './screens'
import { useMe } from './session'

/**
 * A screen whose code is loaded on first visit, and at once when the app starts on its address. React.lazy
 * suspends on a first render even when the module has already arrived (its promise settles a tick later), and
 * React holds the content of a Suspense boundary back until 300 ms after its fallback was shown: on a direct link
 * that delay came after the screen's code and, for an insight, its result had arrived. A screen whose module is
 * here renders without suspending.
 */
function screen(load: () => Promise<{ default: ComponentType }>, ...paths: string[]): ComponentType {
  let loaded: ComponentType | undefined
  const keep = () =>
    load().then((module) => {
      loaded = module.default
      return module
    })
  const Lazy = lazy(keep)
  if (paths.some((path) => matchPath(path, window.location.pathname))) void keep().catch(() => undefined)
  return () => (loaded ? createElement(loaded) : <Lazy />)
}

const Login = screen(() => import('./screens/auth/Login'), '/login')
const Signup = screen(() => import('./screens/auth/Signup'), '/signup', '/signup/:inviteId')
const Reset = screen(() => import('./screens/auth/Reset'), '/reset', '/reset/:uuid/:token')
const NotFound = screen(() => import('./screens/NotFound'))

function Page({ children }: { children: React.ReactNode }) {
  return <Suspense fallback={<Loading />}>{children}</Suspense>
}

/** Screens inside a project need a complete session; otherwise to the login, coming back here after it. */
function RequireLogin() {
  const me = useMe()
  const location = useLocation()
  if (me.isPending) return <Loading />
  if (me.error) return <ErrorState error={me.error} retry={() => me.refetch()} />
  if (!me.data)
    return <Navigate to={`/login?next=${encodeURIComponent(location.pathname + location.search)}`} replace />
  return <Outlet />
}

/** `/`: the current project's first screen, or the login. */
function Home() {
  const me = useMe()
  if (me.isPending) return <Loading />
  if (me.error) return <ErrorState error={me.error} retry={() => me.refetch()} />
  if (!me.data) return <Navigate to="/login" replace />
  const team = me.data.team
  if (!team) return <Navigate to="/settings/no-project" replace />
  return <Navigate to={`/project/${team.id}/${SCREENS[0].path}`} replace />
}

export const router = createBrowserRouter([
  { path: '/', element: <Home /> },
  {
    path: '/login',
    element: (
      <Page>
        <Login />
      </Page>
    ),
  },
  {
    path: '/signup',
    element: (
      <Page>
        <Signup />
      </Page>
    ),
  },
  {
    path: '/signup/:inviteId',
    element: (
      <Page>
        <Signup />
      </Page>
    ),
  },
  {
    path: '/reset',
    element: (
      <Page>
        <Reset />
      </Page>
    ),
  },
  {
    path: '/reset/:uuid/:token',
    element: (
      <Page>
        <Reset />
      </Page>
    ),
  },
  {
    element: <RequireLogin />,
    children: [
      {
        path: '/project/:projectId',
        element: <Shell />,
        children: [
          { index: true, element: <Navigate to={SCREENS[0].path} replace /> },
          ...SCREENS.map((entry) => {
            const Screen = screen(entry.load, `/project/:projectId/${entry.path}`)
            return {
              path: entry.path,
              element: (
                <Page>
                  <Screen />
                </Page>
              ),
            }
          }),
          {
            path: '*',
            element: (
              <Page>
                <NotFound />
              </Page>
            ),
          },
        ],
      },
    ],
  },
  {
    path: '*',
    element: (
      <Page>
        <NotFound />
      </Page>
    ),
  },
])

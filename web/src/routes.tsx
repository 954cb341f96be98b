import { lazy, Suspense } from 'react'
import { createBrowserRouter, Navigate, Outlet, useLocation } from 'react-router'
import { Shell } from './components/Shell'
import { ErrorState, Loading } from './components/States'
import { SCREENS } from './screens'
import { useMe } from './session'

const Login = lazy(() => import('./screens/auth/Login'))
const Signup = lazy(() => import('./screens/auth/Signup'))
const Reset = lazy(() => import('./screens/auth/Reset'))
const NotFound = lazy(() => import('./screens/NotFound'))

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
          ...SCREENS.map((screen) => {
            const Screen = lazy(screen.load)
            return {
              path: screen.path,
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

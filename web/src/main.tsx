import '@mantine/core/styles.css'
import '@mantine/notifications/styles.css'
import { MantineProvider } from '@mantine/core'
import { Notifications } from '@mantine/notifications'
import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { RouterProvider } from 'react-router'
import { ApiError } from './api'
import { router } from './routes'
import { meQuery } from './session'
import { cssVariables, theme } from './theme'

const client = new QueryClient({
  defaultOptions: {
    queries: {
      // A refused request will be refused again: retry only what the network or the server dropped.
      retry: (count, error) => count < 2 && (!(error instanceof ApiError) || error.status === 0 || error.status >= 500),
      refetchOnWindowFocus: false,
    },
  },
})

// A project screen starts with the session check: it is sent now, not once React has rendered the tree that asks.
if (location.pathname === '/' || location.pathname.startsWith('/project/')) void client.prefetchQuery(meQuery)

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <MantineProvider theme={theme} cssVariablesResolver={cssVariables} defaultColorScheme="light">
      <Notifications position="top-right" />
      <QueryClientProvider client={client}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
)

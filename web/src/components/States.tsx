// Every screen's three other states: loading, nothing yet, and a refusal or failure with the server's own words.
import { Alert, Button, Center, Loader, Stack, Text, Title } from '@mantine/core'
import type { ReactNode } from 'react'
import { ApiError } from '../api'

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Stack align="center" gap="xs">
        <Loader size="md" aria-hidden />
        <Text size="sm" c="dimmed">
          {label}
        </Text>
      </Stack>
    </Center>
  )
}

export function Empty({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <Center py="xl" data-testid="empty-state">
      <Stack align="center" gap="xs" maw={480}>
        <Title order={3} size="h4">
          {title}
        </Title>
        {children ? (
          <Text size="sm" c="dimmed" ta="center">
            {children}
          </Text>
        ) : null}
        {action}
      </Stack>
    </Center>
  )
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.detail
  if (error instanceof Error) return error.message
  return String(error)
}

export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  const code = error instanceof ApiError ? error.code : null
  return (
    <Alert color="red" title="Something went wrong" role="alert" data-testid="error-state" my="md">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">{errorText(error)}</Text>
        {code ? (
          <Text size="xs" c="dimmed">
            {code}
          </Text>
        ) : null}
        {retry ? (
          <Button size="xs" variant="light" color="red" onClick={retry}>
            Try again
          </Button>
        ) : null}
      </Stack>
    </Alert>
  )
}

/** The usual triple for one query: loading, error (with retry), else the content. */
export function QueryState<T>({
  query,
  children,
}: {
  query: { isPending: boolean; error: unknown; data: T | undefined; refetch: () => unknown }
  children: (data: T) => ReactNode
}) {
  if (query.isPending) return <Loading />
  if (query.error) return <ErrorState error={query.error} retry={() => query.refetch()} />
  return <>{children(query.data as T)}</>
}

import { Anchor, Center, Paper, Stack, Text, Title } from '@mantine/core'
import type { ReactNode } from 'react'

/** The centred card the logged-out screens share. */
export function AuthLayout({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Center mih="100vh" bg="gray.0" component="main">
      <Stack w={380} gap="md">
        <Text fw={700} size="xl" ta="center">
          Burrow
        </Text>
        <Paper withBorder shadow="sm" p="lg" radius="md">
          <Title order={1} size="h3" mb="md">
            {title}
          </Title>
          {children}
        </Paper>
        <Text size="xs" c="dimmed" ta="center">
          Self-hosted product analytics ·{' '}
          <Anchor href="/about" size="xs">
            API and SDK setup
          </Anchor>
        </Text>
      </Stack>
    </Center>
  )
}

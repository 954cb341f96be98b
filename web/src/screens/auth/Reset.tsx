// Password reset: ask for the mail (`/reset`), then set the new password from the mailed link
// (`/reset/:uuid/:token`).
import { Alert, Anchor, Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core'
import { type FormEvent, useState } from 'react'
import { Link, useParams } from 'react-router'
import { api } from '../../api'
import { errorText } from '../../components/States'
import { AuthLayout } from './AuthLayout'

export default function Reset() {
  const { uuid, token } = useParams()
  const [value, setValue] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [done, setDone] = useState(false)
  const [busy, setBusy] = useState(false)

  async function submit(event: FormEvent) {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      if (uuid) await api('POST', `/api/reset/${encodeURIComponent(uuid)}/`, { token, password: value })
      else await api('POST', '/api/reset/', { email: value })
      setDone(true)
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <AuthLayout title={uuid ? 'Choose a new password' : 'Reset your password'}>
      {done ? (
        <Stack gap="sm">
          <Text size="sm" role="status">
            {uuid
              ? 'Your password has been changed. Log in with it now.'
              : 'If an account exists for that address, a reset link is on its way.'}
          </Text>
          <Anchor component={Link} to="/login" size="sm">
            Back to log in
          </Anchor>
        </Stack>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack gap="sm">
            {error ? (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            ) : null}
            {uuid ? (
              <PasswordInput
                label="New password"
                autoComplete="new-password"
                required
                value={value}
                onChange={(e) => setValue(e.currentTarget.value)}
              />
            ) : (
              <TextInput
                label="Email"
                type="email"
                autoComplete="email"
                required
                value={value}
                onChange={(e) => setValue(e.currentTarget.value)}
              />
            )}
            <Button type="submit" loading={busy} fullWidth>
              {uuid ? 'Set password' : 'Send reset link'}
            </Button>
            <Anchor component={Link} to="/login" size="sm">
              Back to log in
            </Anchor>
          </Stack>
        </form>
      )}
    </AuthLayout>
  )
}

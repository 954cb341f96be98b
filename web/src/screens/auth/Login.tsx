// Login, then the second factor when the account has 2FA on (`/api/login` answers 401 `2fa_required`).
import { Alert, Anchor, Button, Group, PasswordInput, Stack, TextInput } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { ApiError, api } from '../../api'
import { errorText } from '../../components/States'
import { ME_KEY } from '../../session'
import { AuthLayout } from './AuthLayout'

/** Only same-site paths: a crafted `next` never sends the user elsewhere. */
function safeNext(next: string | null): string {
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/'
}

export default function Login() {
  const [params] = useSearchParams()
  const navigate = useNavigate()
  const client = useQueryClient()
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [token, setToken] = useState('')
  const [step, setStep] = useState<'password' | 'token'>('password')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  async function done() {
    client.removeQueries({ queryKey: ME_KEY })
    navigate(safeNext(params.get('next')), { replace: true })
  }

  async function submit(event: FormEvent) {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      if (step === 'password') await api('POST', '/api/login', { email, password })
      else await api('POST', '/api/login/token', { token: token.trim() })
      await done()
    } catch (e) {
      if (e instanceof ApiError && e.code === '2fa_required') setStep('token')
      else {
        if (e instanceof ApiError && e.code === '2fa_expired') setStep('password')
        setError(errorText(e))
      }
    } finally {
      setBusy(false)
    }
  }

  return (
    <AuthLayout title={step === 'password' ? 'Log in' : 'Two-factor authentication'}>
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          {error ? (
            <Alert color="red" role="alert" data-testid="login-error">
              {error}
            </Alert>
          ) : null}
          {step === 'password' ? (
            <>
              <TextInput
                label="Email"
                type="email"
                autoComplete="email"
                required
                autoFocus
                value={email}
                onChange={(e) => setEmail(e.currentTarget.value)}
              />
              <PasswordInput
                label="Password"
                autoComplete="current-password"
                required
                value={password}
                onChange={(e) => setPassword(e.currentTarget.value)}
              />
            </>
          ) : (
            <TextInput
              label="Authentication code"
              description="The 6-digit code from your authenticator app, or a backup code."
              autoComplete="one-time-code"
              inputMode="numeric"
              required
              autoFocus
              value={token}
              onChange={(e) => setToken(e.currentTarget.value)}
            />
          )}
          <Button type="submit" loading={busy} fullWidth>
            {step === 'password' ? 'Log in' : 'Verify'}
          </Button>
          <Group justify="space-between">
            <Anchor component={Link} to="/reset" size="sm">
              Forgot your password?
            </Anchor>
            <Anchor component={Link} to="/signup" size="sm">
              Create an account
            </Anchor>
          </Group>
        </Stack>
      </form>
    </AuthLayout>
  )
}

// Sign-up: the first user of an instance (creates the organization), or someone accepting an invite
// (`/signup/:inviteId`, the address fixed by the invite).
import { Alert, Anchor, Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { api, get } from '../../api'
import { ErrorState, errorText, Loading } from '../../components/States'
import { ME_KEY } from '../../session'
import { AuthLayout } from './AuthLayout'

interface Invite {
  id: string
  target_email: string
  first_name: string
  organization_name: string
}

export default function Signup() {
  const { inviteId } = useParams()
  const navigate = useNavigate()
  const client = useQueryClient()
  const invite = useQuery({
    queryKey: ['invite', inviteId],
    queryFn: () => get<Invite>(`/api/signup/${encodeURIComponent(inviteId ?? '')}/`),
    enabled: Boolean(inviteId),
    retry: false,
  })
  const [form, setForm] = useState({ email: '', password: '', first_name: '', organization_name: '' })
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const set = (key: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) =>
    setForm({ ...form, [key]: e.currentTarget.value })

  async function submit(event: FormEvent) {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      if (inviteId) {
        await api('POST', `/api/signup/${encodeURIComponent(inviteId)}/`, {
          first_name: form.first_name || invite.data?.first_name,
          password: form.password,
        })
      } else {
        await api('POST', '/api/signup/', {
          email: form.email,
          password: form.password,
          first_name: form.first_name,
          ...(form.organization_name ? { organization_name: form.organization_name } : {}),
        })
      }
      client.removeQueries({ queryKey: ME_KEY })
      navigate('/', { replace: true })
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy(false)
    }
  }

  if (inviteId && invite.isPending) return <Loading />
  if (inviteId && invite.error)
    return (
      <AuthLayout title="Invite">
        <ErrorState error={invite.error} />
      </AuthLayout>
    )

  return (
    <AuthLayout title={invite.data ? `Join ${invite.data.organization_name}` : 'Create your account'}>
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          {error ? (
            <Alert color="red" role="alert" data-testid="signup-error">
              {error}
            </Alert>
          ) : null}
          {invite.data ? (
            <Text size="sm">
              Signing up as <strong>{invite.data.target_email}</strong>
            </Text>
          ) : (
            <TextInput
              label="Email"
              type="email"
              autoComplete="email"
              required
              value={form.email}
              onChange={set('email')}
            />
          )}
          <TextInput
            label="First name"
            autoComplete="given-name"
            required
            value={form.first_name || (invite.data?.first_name ?? '')}
            onChange={set('first_name')}
          />
          <PasswordInput
            label="Password"
            autoComplete="new-password"
            required
            value={form.password}
            onChange={set('password')}
          />
          {inviteId ? null : (
            <TextInput label="Organization name" value={form.organization_name} onChange={set('organization_name')} />
          )}
          <Button type="submit" loading={busy} fullWidth>
            Sign up
          </Button>
          <Anchor component={Link} to="/login" size="sm">
            Already have an account? Log in
          </Anchor>
        </Stack>
      </form>
    </AuthLayout>
  )
}

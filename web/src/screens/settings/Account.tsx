// The user's own account (PostHog's Settings → User): name and email (a new address is confirmed by mail first),
// password change, and two-factor authentication — set up by scanning a QR code of the otpauth URI and confirming
// with a code, backup codes shown once and regenerated, and turning it off.
import {
  Alert,
  Anchor,
  Button,
  Code,
  Divider,
  Group,
  PasswordInput,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import QRCode from 'qrcode'
import { useEffect, useState } from 'react'
import { api, get } from '../../api'
import { ConfirmButton } from '../../components/ConfirmButton'
import { notify } from '../../components/notify'
import { ErrorState, errorText, Loading } from '../../components/States'
import { ME_KEY, type Me, useMe } from '../../session'

interface UserRecord extends Me {
  last_name: string
  pending_email: string | null
  has_password: boolean
}

export default function Account() {
  const me = useMe()
  return (
    <Stack gap="lg" maw={720}>
      <Title order={1} size="h2">
        Account settings
      </Title>
      {me.isPending ? (
        <Loading />
      ) : me.error || !me.data ? (
        <ErrorState error={me.error ?? new Error('Not logged in')} retry={() => me.refetch()} />
      ) : (
        <>
          <Profile user={me.data as UserRecord} />
          <Divider />
          <Password />
          <Divider />
          <TwoFactor />
        </>
      )}
    </Stack>
  )
}

function Profile({ user }: { user: UserRecord }) {
  const client = useQueryClient()
  const [first, setFirst] = useState(user.first_name)
  const [last, setLast] = useState(user.last_name ?? '')
  const [email, setEmail] = useState(user.email)
  useEffect(() => {
    setFirst(user.first_name)
    setLast(user.last_name ?? '')
    setEmail(user.email)
  }, [user])
  const save = useMutation({
    mutationFn: () => {
      const body: Record<string, string> = { first_name: first.trim(), last_name: last.trim() }
      if (email.trim() !== user.email) body.email = email.trim()
      return api<UserRecord>('PATCH', '/api/users/@me/', body)
    },
    onSuccess: (saved) => {
      client.setQueryData(ME_KEY, saved)
      notify('Profile saved', 'teal')
    },
  })
  const cancel = useMutation({
    mutationFn: () => api<UserRecord>('PATCH', '/api/users/cancel_email_change_request/'),
    onSuccess: (saved) => client.setQueryData(ME_KEY, saved),
  })
  return (
    <form
      aria-labelledby="profile-heading"
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <Stack gap="sm">
        <Title order={2} size="h4" id="profile-heading">
          Profile
        </Title>
        <SimpleGrid cols={2}>
          <TextInput label="First name" required value={first} onChange={(e) => setFirst(e.currentTarget.value)} />
          <TextInput label="Last name" value={last} onChange={(e) => setLast(e.currentTarget.value)} />
        </SimpleGrid>
        <TextInput
          label="Email"
          type="email"
          required
          description="A new address is used once you confirm it from the mail we send there"
          value={email}
          onChange={(e) => setEmail(e.currentTarget.value)}
        />
        {user.pending_email ? (
          <Alert color="blue" data-testid="pending-email">
            <Group gap="xs">
              <Text size="sm">
                Waiting for confirmation of <strong>{user.pending_email}</strong>.
              </Text>
              <Anchor component="button" type="button" size="sm" onClick={() => cancel.mutate()}>
                Cancel the change
              </Anchor>
            </Group>
          </Alert>
        ) : null}
        {save.error ? (
          <Text c="red" size="sm" role="alert" data-testid="profile-error">
            {errorText(save.error)}
          </Text>
        ) : null}
        <Group>
          <Button type="submit" loading={save.isPending}>
            Save profile
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

function Password() {
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const change = useMutation({
    mutationFn: () => api('PATCH', '/api/users/@me/', { current_password: current, password: next }),
    onSuccess: () => {
      setCurrent('')
      setNext('')
      notify('Password changed. Your other sessions were logged out.', 'teal')
    },
  })
  return (
    <form
      aria-labelledby="password-heading"
      onSubmit={(e) => {
        e.preventDefault()
        change.mutate()
      }}
    >
      <Stack gap="sm">
        <Title order={2} size="h4" id="password-heading">
          Change password
        </Title>
        <PasswordInput
          label="Current password"
          autoComplete="current-password"
          required
          value={current}
          onChange={(e) => setCurrent(e.currentTarget.value)}
        />
        <PasswordInput
          label="New password"
          autoComplete="new-password"
          required
          value={next}
          onChange={(e) => setNext(e.currentTarget.value)}
        />
        {change.error ? (
          <Text c="red" size="sm" role="alert" data-testid="password-error">
            {errorText(change.error)}
          </Text>
        ) : null}
        <Group>
          <Button type="submit" loading={change.isPending}>
            Change password
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

interface TwoFactorStatus {
  is_enabled: boolean
  backup_codes_remaining: number
}
interface Setup {
  secret: string
  uri: string
}

const STATUS = ['two-factor-status'] as const

function TwoFactor() {
  const client = useQueryClient()
  const status = useQuery({
    queryKey: STATUS,
    queryFn: () => get<TwoFactorStatus>('/api/users/@me/two_factor_status/'),
  })
  const [setup, setSetup] = useState<Setup | null>(null)
  const [codes, setCodes] = useState<string[] | null>(null)
  const refresh = async () => {
    await client.invalidateQueries({ queryKey: STATUS })
    await client.invalidateQueries({ queryKey: ME_KEY })
  }
  const start = useMutation({
    mutationFn: () => get<Setup>('/api/users/@me/two_factor_start_setup/'),
    onSuccess: setSetup,
  })
  const regenerate = useMutation({
    mutationFn: () => api<{ backup_codes: string[] }>('POST', '/api/users/@me/two_factor_backup_codes/'),
    onSuccess: async (r) => {
      setCodes(r.backup_codes)
      await refresh()
    },
  })
  return (
    <Stack gap="sm" component="section" aria-labelledby="twofa-heading">
      <Title order={2} size="h4" id="twofa-heading">
        Two-factor authentication
      </Title>
      {status.isPending ? (
        <Loading />
      ) : status.error ? (
        <ErrorState error={status.error} retry={() => status.refetch()} />
      ) : status.data.is_enabled ? (
        <Stack gap="sm">
          <Alert color="teal" data-testid="twofa-enabled">
            Two-factor authentication is on. {status.data.backup_codes_remaining} backup code
            {status.data.backup_codes_remaining === 1 ? '' : 's'} left.
          </Alert>
          {codes ? (
            <Stack gap="xs">
              <Text size="sm">
                Your backup codes — each works once if you lose your authenticator. Keep them somewhere safe: they are
                not shown again.
              </Text>
              <Code block data-testid="backup-codes">
                {codes.join('\n')}
              </Code>
            </Stack>
          ) : null}
          {regenerate.error ? (
            <Text c="red" size="sm" role="alert">
              {errorText(regenerate.error)}
            </Text>
          ) : null}
          <Group>
            <Button variant="light" loading={regenerate.isPending} onClick={() => regenerate.mutate()}>
              {codes ? 'Generate new backup codes' : 'Show new backup codes'}
            </Button>
            <ConfirmButton
              title="Turn off two-factor authentication"
              message="Your account will be protected by your password alone."
              confirmLabel="Disable 2FA"
              onConfirm={async () => {
                await api('POST', '/api/users/@me/two_factor_disable/')
                setCodes(null)
                await refresh()
              }}
            >
              Disable 2FA
            </ConfirmButton>
          </Group>
        </Stack>
      ) : setup ? (
        <ConfirmSetup
          setup={setup}
          onCancel={() => setSetup(null)}
          onDone={async () => {
            setSetup(null)
            await refresh()
            regenerate.mutate()
          }}
        />
      ) : (
        <Stack gap="xs" align="flex-start">
          <Text size="sm">Protect your account with a code from an authenticator app when you log in.</Text>
          {start.error ? (
            <Text c="red" size="sm" role="alert">
              {errorText(start.error)}
            </Text>
          ) : null}
          <Button loading={start.isPending} onClick={() => start.mutate()}>
            Set up 2FA
          </Button>
        </Stack>
      )}
    </Stack>
  )
}

function ConfirmSetup({ setup, onCancel, onDone }: { setup: Setup; onCancel: () => void; onDone: () => void }) {
  const [qr, setQr] = useState<string | null>(null)
  const [code, setCode] = useState('')
  useEffect(() => {
    let live = true
    QRCode.toDataURL(setup.uri, { margin: 1, width: 200 }).then((url) => live && setQr(url))
    return () => {
      live = false
    }
  }, [setup.uri])
  const validate = useMutation({
    mutationFn: () => api('POST', '/api/users/@me/two_factor_validate/', { token: code.trim() }),
    onSuccess: onDone,
  })
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        validate.mutate()
      }}
    >
      <Stack gap="sm">
        <Text size="sm">
          Scan this QR code with your authenticator app (Google Authenticator, 1Password, Authy…), then enter the
          6-digit code it shows.
        </Text>
        {qr ? (
          <img
            src={qr}
            width={200}
            height={200}
            alt="QR code to add this account to an authenticator app"
            data-testid="twofa-qr"
          />
        ) : (
          <Loading label="Drawing the QR code…" />
        )}
        <Text size="sm">
          Can't scan it? Enter this key instead: <Code data-testid="twofa-secret">{setup.secret}</Code>
        </Text>
        <TextInput
          label="Authentication code"
          inputMode="numeric"
          autoComplete="one-time-code"
          required
          value={code}
          onChange={(e) => setCode(e.currentTarget.value)}
          w={220}
          data-autofocus
        />
        {validate.error ? (
          <Text c="red" size="sm" role="alert" data-testid="twofa-error">
            {errorText(validate.error)}
          </Text>
        ) : null}
        <Group>
          <Button type="submit" loading={validate.isPending}>
            Enable 2FA
          </Button>
          <Button variant="default" onClick={onCancel}>
            Cancel
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

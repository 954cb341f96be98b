// Members and invites of the current organization (PostHog's Settings → Organization → Members): the members with
// their level (changed in place by admins), removal, pending invites with revocation, and a form to invite by email.
import { Badge, Button, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, get, type Page } from '../../api'
import { ConfirmButton } from '../../components/ConfirmButton'
import { notify } from '../../components/notify'
import { Empty, ErrorState, errorText, Loading } from '../../components/States'
import { useMe } from '../../session'

interface UserBasic {
  uuid: string
  email: string
  first_name: string
  last_name: string
}
interface Member {
  id: string
  user: UserBasic
  level: number
  joined_at: string
  is_2fa_enabled: boolean
  last_login: string | null
}
interface Invite {
  id: string
  target_email: string
  first_name: string
  level: number
  is_expired: boolean
  created_at: string
  created_by: UserBasic | null
}

const LEVELS = [
  { value: '1', label: 'Member' },
  { value: '8', label: 'Admin' },
  { value: '15', label: 'Owner' },
]
const levelName = (level: number) => LEVELS.find((l) => l.value === String(level))?.label ?? String(level)
const ORG = '/api/organizations/@current'

export default function Members() {
  const me = useMe()
  const client = useQueryClient()
  const members = useQuery({
    queryKey: ['members'],
    queryFn: () => get<Page<Member>>(`${ORG}/members/?limit=500`),
  })
  const invites = useQuery({
    queryKey: ['invites'],
    queryFn: () => get<Page<Invite>>(`${ORG}/invites/?limit=500`),
  })
  const myLevel = members.data?.results.find((m) => m.user.uuid === me.data?.uuid)?.level ?? 0
  const isAdmin = myLevel >= 8
  const changeLevel = useMutation({
    mutationFn: ({ member, level }: { member: Member; level: number }) =>
      api('PATCH', `${ORG}/members/${member.user.uuid}/`, { level }),
    onSuccess: (_, { member, level }) => {
      void client.invalidateQueries({ queryKey: ['members'] })
      notify(`${member.user.email} is now ${levelName(level).toLowerCase()}`, 'teal')
    },
    onError: (error) => notify(errorText(error), 'red'),
  })
  return (
    <Stack gap="lg" maw={1000}>
      <Title order={1} size="h2">
        Members
      </Title>
      <InviteForm />
      <Stack gap="xs" component="section" aria-labelledby="members-heading">
        <Title order={2} size="h4" id="members-heading">
          Members of {me.data?.organization?.name ?? 'the organization'}
        </Title>
        {members.isPending ? (
          <Loading label="Loading members…" />
        ) : members.error ? (
          <ErrorState error={members.error} retry={() => members.refetch()} />
        ) : members.data.results.length === 0 ? (
          <Empty title="No members" />
        ) : (
          <Table striped aria-label="Members">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Email</Table.Th>
                <Table.Th>Level</Table.Th>
                <Table.Th>2FA</Table.Th>
                <Table.Th>Joined</Table.Th>
                <Table.Th>Remove</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {members.data.results.map((m) => {
                const self = m.user.uuid === me.data?.uuid
                const name = `${m.user.first_name} ${m.user.last_name}`.trim() || m.user.email
                return (
                  <Table.Tr key={m.id} data-testid="member-row">
                    <Table.Td>
                      {name}
                      {self ? (
                        <Badge size="xs" ml={6} color="blue.8">
                          You
                        </Badge>
                      ) : null}
                    </Table.Td>
                    <Table.Td>{m.user.email}</Table.Td>
                    <Table.Td>
                      {isAdmin && !self ? (
                        <Select
                          aria-label={`Level of ${m.user.email}`}
                          data={LEVELS.filter((l) => Number(l.value) <= myLevel)}
                          value={String(m.level)}
                          allowDeselect={false}
                          onChange={(v) => v && changeLevel.mutate({ member: m, level: Number(v) })}
                          w={130}
                          size="xs"
                        />
                      ) : (
                        levelName(m.level)
                      )}
                    </Table.Td>
                    <Table.Td>{m.is_2fa_enabled ? 'On' : 'Off'}</Table.Td>
                    <Table.Td>{new Date(m.joined_at).toLocaleDateString()}</Table.Td>
                    <Table.Td>
                      {self || !isAdmin ? null : (
                        <ConfirmButton
                          size="xs"
                          title="Remove member"
                          message={`Remove ${m.user.email} from the organization? They lose access to every project in it.`}
                          confirmLabel="Remove"
                          aria-label={`Remove ${m.user.email}`}
                          onConfirm={async () => {
                            await api('DELETE', `${ORG}/members/${m.user.uuid}/`)
                            await client.invalidateQueries({ queryKey: ['members'] })
                          }}
                        >
                          Remove
                        </ConfirmButton>
                      )}
                    </Table.Td>
                  </Table.Tr>
                )
              })}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
      <Stack gap="xs" component="section" aria-labelledby="invites-heading">
        <Title order={2} size="h4" id="invites-heading">
          Pending invites
        </Title>
        {invites.isPending ? (
          <Loading label="Loading invites…" />
        ) : invites.error ? (
          <ErrorState error={invites.error} retry={() => invites.refetch()} />
        ) : invites.data.results.length === 0 ? (
          <Text size="sm" c="dimmed" data-testid="no-invites">
            No pending invites.
          </Text>
        ) : (
          <Table striped aria-label="Pending invites">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Email</Table.Th>
                <Table.Th>Level</Table.Th>
                <Table.Th>Invited</Table.Th>
                <Table.Th>Link</Table.Th>
                <Table.Th>Revoke</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {invites.data.results.map((inv) => (
                <Table.Tr key={inv.id} data-testid="invite-row">
                  <Table.Td>{inv.target_email}</Table.Td>
                  <Table.Td>{levelName(inv.level)}</Table.Td>
                  <Table.Td>
                    {new Date(inv.created_at).toLocaleDateString()}
                    {inv.is_expired ? (
                      <Badge size="xs" color="red.8" ml={6}>
                        Expired
                      </Badge>
                    ) : null}
                  </Table.Td>
                  <Table.Td>
                    <Text size="xs" ff="monospace">
                      {`${window.location.origin}/signup/${inv.id}`}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <ConfirmButton
                      size="xs"
                      title="Revoke invite"
                      message={`Revoke the invite for ${inv.target_email}? The link stops working.`}
                      confirmLabel="Revoke"
                      aria-label={`Revoke invite for ${inv.target_email}`}
                      onConfirm={async () => {
                        await api('DELETE', `${ORG}/invites/${inv.id}/`)
                        await client.invalidateQueries({ queryKey: ['invites'] })
                      }}
                    >
                      Revoke
                    </ConfirmButton>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Stack>
  )
}

function InviteForm() {
  const client = useQueryClient()
  const [email, setEmail] = useState('')
  const [firstName, setFirstName] = useState('')
  const [level, setLevel] = useState('1')
  const invite = useMutation({
    mutationFn: () =>
      api<Invite>('POST', `${ORG}/invites/`, {
        target_email: email.trim(),
        first_name: firstName.trim(),
        level: Number(level),
      }),
    onSuccess: (created) => {
      setEmail('')
      setFirstName('')
      setLevel('1')
      void client.invalidateQueries({ queryKey: ['invites'] })
      notify(`Invited ${created.target_email}`, 'teal')
    },
  })
  return (
    <form
      aria-label="Invite a team member"
      onSubmit={(e) => {
        e.preventDefault()
        invite.mutate()
      }}
    >
      <Stack gap="xs">
        <Title order={2} size="h4">
          Invite a team member
        </Title>
        <Group align="flex-end" gap="sm">
          <TextInput
            label="Email address"
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            w={280}
          />
          <TextInput
            label="First name"
            value={firstName}
            onChange={(e) => setFirstName(e.currentTarget.value)}
            w={180}
          />
          <Select
            label="Level"
            data={LEVELS}
            value={level}
            onChange={(v) => setLevel(v ?? '1')}
            allowDeselect={false}
            w={140}
          />
          <Button type="submit" loading={invite.isPending}>
            Send invite
          </Button>
        </Group>
        {invite.error ? (
          <Text c="red" size="sm" role="alert" data-testid="invite-error">
            {errorText(invite.error)}
          </Text>
        ) : null}
      </Stack>
    </form>
  )
}

// The frame of every project screen: navigation by section, the project switcher and the user menu.
import { AppShell, Burger, Group, Menu, NavLink, Select, Stack, Text, UnstyledButton } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { Outlet, NavLink as RouterLink, useLocation, useNavigate } from 'react-router'
import { SCREENS, type ScreenEntry } from '../screens'
import { useLogout, useMe, useProjectId, useProjects } from '../session'

const SECTIONS: NonNullable<ScreenEntry['nav']>['section'][] = ['Product analytics', 'Data', 'Features', 'Settings']

function ProjectSwitcher() {
  const projects = useProjects()
  const projectId = useProjectId()
  const navigate = useNavigate()
  const location = useLocation()
  const data = (projects.data ?? []).map((p) => ({ value: String(p.id), label: p.name }))
  return (
    <Select
      aria-label="Project"
      size="xs"
      w={220}
      data={data}
      value={String(projectId)}
      allowDeselect={false}
      disabled={projects.isPending}
      onChange={(value) => {
        if (!value) return
        // The same screen in the other project (its list page, not a detail page of this one).
        const rest = location.pathname.split('/').slice(3, 4).join('/')
        navigate(`/project/${value}/${rest}`)
      }}
    />
  )
}

function UserMenu() {
  const me = useMe()
  const logout = useLogout()
  const projectId = useProjectId()
  const navigate = useNavigate()
  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <UnstyledButton data-testid="account-menu">
          <Text size="sm">{me.data?.email}</Text>
        </UnstyledButton>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Item onClick={() => navigate(`/project/${projectId}/settings/account`)}>Account settings</Menu.Item>
        <Menu.Item onClick={() => void logout()}>Log out</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  )
}

export function Shell() {
  const [opened, { toggle }] = useDisclosure()
  const projectId = useProjectId()
  return (
    <AppShell
      header={{ height: 52 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Group gap="sm">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Text fw={700} component="span">
              Burrow
            </Text>
            <ProjectSwitcher />
          </Group>
          <UserMenu />
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        {/* The browser's own scrolling: the component library's scroll area measured itself on every page's start. */}
        <AppShell.Section grow style={{ overflowY: 'auto' }}>
          <Stack gap="md">
            {SECTIONS.map((section) => {
              const items = SCREENS.filter((s) => s.nav?.section === section)
              if (!items.length) return null
              return (
                <nav key={section} aria-label={section}>
                  <Text size="xs" fw={700} c="dimmed" tt="uppercase" px="sm" pb={4}>
                    {section}
                  </Text>
                  {items.map((s) => (
                    <NavLink
                      key={s.path}
                      component={RouterLink}
                      to={`/project/${projectId}/${s.path}`}
                      label={s.nav?.label}
                      variant="filled"
                    />
                  ))}
                </nav>
              )
            })}
          </Stack>
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  )
}

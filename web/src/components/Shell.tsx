// The frame of every project screen: navigation by section, the project switcher and the user menu.
import { AppShell, Burger, Group, Menu, NavLink, Select, Stack, Text, UnstyledButton } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { memo } from 'react'
import { Outlet, useLocation, useNavigate } from 'react-router'
import { SCREENS, type ScreenEntry } from '../screens'
import { useLogout, useMe, useProjectId, useProjects } from '../session'

const SECTIONS: NonNullable<ScreenEntry['nav']>['section'][] = ['Product analytics', 'Data', 'Features', 'Settings']

// The parts of the frame are memoised on what they show (the project, the path): an address that changes only its
// query string (an insight's editor writes its query there on every edit) re-renders none of them. They take the
// router's `navigate` (stable) as a prop rather than reading the router's location, which changes with the query
// string.
type Navigate = ReturnType<typeof useNavigate>

const ProjectSwitcher = memo(function ProjectSwitcher({
  projectId,
  navigate,
}: {
  projectId: number
  navigate: Navigate
}) {
  const projects = useProjects()
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
        const rest = window.location.pathname.split('/').slice(3, 4).join('/')
        navigate(`/project/${value}/${rest}`)
      }}
    />
  )
})

const UserMenu = memo(function UserMenu({ projectId, navigate }: { projectId: number; navigate: Navigate }) {
  const me = useMe()
  const logout = useLogout()
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
})

/** A plain click follows the link inside the app; a click with a modifier (new tab, new window) is the browser's. */
function follow(navigate: Navigate, to: string) {
  return (e: React.MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || e.defaultPrevented) return
    e.preventDefault()
    navigate(to)
  }
}

const Navigation = memo(function Navigation({
  projectId,
  pathname,
  navigate,
}: {
  projectId: number
  pathname: string
  navigate: Navigate
}) {
  return (
    <Stack gap="md">
      {SECTIONS.map((section) => {
        const items = SCREENS.filter((s) => s.nav?.section === section)
        if (!items.length) return null
        return (
          <nav key={section} aria-label={section}>
            <Text size="xs" fw={700} c="dimmed" tt="uppercase" px="sm" pb={4}>
              {section}
            </Text>
            {items.map((s) => {
              const to = `/project/${projectId}/${s.path}`
              const current = pathname === to || pathname.startsWith(`${to}/`)
              return (
                <NavLink
                  key={s.path}
                  component="a"
                  href={to}
                  onClick={follow(navigate, to)}
                  aria-current={current ? 'page' : undefined}
                  label={s.nav?.label}
                  variant="filled"
                />
              )
            })}
          </nav>
        )
      })}
    </Stack>
  )
})

export function Shell() {
  const [opened, { toggle }] = useDisclosure()
  const projectId = useProjectId()
  const navigate = useNavigate()
  const { pathname } = useLocation()
  return (
    <AppShell
      header={{ height: 52 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <Header projectId={projectId} navigate={navigate} opened={opened} toggle={toggle} />
      <AppShell.Navbar p="xs" aria-label="Main">
        {/* The browser's own scrolling: the component library's scroll area measured itself on every page's start. */}
        <AppShell.Section grow style={{ overflowY: 'auto' }}>
          <Navigation projectId={projectId} pathname={pathname} navigate={navigate} />
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  )
}

const Header = memo(function Header({
  projectId,
  navigate,
  opened,
  toggle,
}: {
  projectId: number
  navigate: Navigate
  opened: boolean
  toggle: () => void
}) {
  return (
    <AppShell.Header>
      <Group h="100%" px="md" justify="space-between">
        <Group gap="sm">
          <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
          <Text fw={700} component="span">
            Burrow
          </Text>
          <ProjectSwitcher projectId={projectId} navigate={navigate} />
        </Group>
        <UserMenu projectId={projectId} navigate={navigate} />
      </Group>
    </AppShell.Header>
  )
})

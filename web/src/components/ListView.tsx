// The pieces every list screen shares: a search field that applies on Enter or when it loses focus, the list's
// body (loading, error with retry, empty, else a striped table and a pager once the count passes one page), and
// the name cell that links to an item's page with its description below.
import { Anchor, Pagination, Table, Text, TextInput, VisuallyHidden } from '@mantine/core'
import { type ReactNode, useEffect, useState } from 'react'
import { Link } from 'react-router'
import { ErrorState, Loading } from './States'

export interface Column<T> {
  header: string
  /** The header is read by screen readers only (a column of buttons). */
  hiddenHeader?: boolean
  width?: number
  cell: (row: T) => ReactNode
}

export interface Paging {
  count: number
  size: number
  page: number
  onPage: (page: number) => void
}

export function ListView<T>({
  query,
  rows,
  loadingLabel,
  empty,
  columns,
  rowKey,
  testId,
  label,
  rowTestId,
  minWidth = 700,
  paging,
  footer,
}: {
  query: { isPending: boolean; error: unknown; refetch: () => unknown }
  /** The rows to show, once the query has answered. */
  rows: T[] | undefined
  loadingLabel: string
  /** Shown when there are no rows: the screen knows whether a search or a filter explains it. */
  empty: ReactNode
  columns: Column<T>[]
  rowKey: (row: T) => string | number
  testId?: string
  /** The table's accessible name. */
  label?: string
  rowTestId?: string
  minWidth?: number
  paging?: Paging
  /** Below the table, in place of the page-numbered pager (an offset pager, a note). */
  footer?: ReactNode
}) {
  if (query.isPending) return <Loading label={loadingLabel} />
  if (query.error) return <ErrorState error={query.error} retry={() => query.refetch()} />
  if (!rows || rows.length === 0) return <>{empty}</>
  return (
    <>
      <Table.ScrollContainer minWidth={minWidth}>
        <Table striped highlightOnHover data-testid={testId} aria-label={label}>
          <Table.Thead>
            <Table.Tr>
              {columns.map((column) => (
                <Table.Th key={column.header} w={column.width}>
                  {column.hiddenHeader ? <VisuallyHidden>{column.header}</VisuallyHidden> : column.header}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((row) => (
              <Table.Tr key={rowKey(row)} data-testid={rowTestId}>
                {columns.map((column) => (
                  <Table.Td key={column.header}>{column.cell(row)}</Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {paging && paging.count > paging.size ? (
        <Pagination
          total={Math.ceil(paging.count / paging.size)}
          value={paging.page}
          onChange={paging.onPage}
          getControlProps={(control) => ({ 'aria-label': `${control} page` })}
        />
      ) : null}
      {footer}
    </>
  )
}

/** A search box over a list: the URL's search is `value`; typing edits a draft applied on Enter or on blur. */
export function SearchField({
  value,
  placeholder,
  onSearch,
  label = 'Search',
}: {
  value: string
  placeholder: string
  onSearch: (search: string) => void
  label?: string
}) {
  const [draft, setDraft] = useState(value)
  useEffect(() => setDraft(value), [value])
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        onSearch(draft.trim())
      }}
      style={{ flex: 1, maxWidth: 420 }}
    >
      <TextInput
        label={label}
        placeholder={placeholder}
        value={draft}
        onChange={(e) => setDraft(e.currentTarget.value)}
        onBlur={() => draft.trim() !== value && onSearch(draft.trim())}
      />
    </form>
  )
}

/** An item's name linking to its page, with its description (if any) on one dimmed line below. */
export function NameCell({ to, name, note }: { to: string; name: ReactNode; note?: string | null }) {
  return (
    <>
      <Anchor component={Link} to={to} fw={600} size="sm">
        {name}
      </Anchor>
      {note ? (
        <Text size="xs" c="dimmed" lineClamp={1}>
          {note}
        </Text>
      ) : null}
    </>
  )
}

/** Who made something, as the lists show it: first name, else e-mail, else a dash. */
export function creatorName(createdBy: { first_name?: string | null; email?: string | null } | null | undefined) {
  return createdBy?.first_name || createdBy?.email || '—'
}

export const shortDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleDateString() : '—')

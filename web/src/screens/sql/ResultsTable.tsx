// A results table for up to 50,000 rows: rows have one height, and only those in view (plus a few either side)
// are in the DOM; the scroll area is as tall as all of them. The header stays on top; the area scrolls with the
// keyboard once focused.
import { Box, Text } from '@mantine/core'
import { useCallback, useLayoutEffect, useRef, useState } from 'react'

const ROW_HEIGHT = 32
const OVERSCAN = 8
const COLUMN_WIDTH = 180

export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

export interface ResultsTableProps {
  columns: string[]
  rows: unknown[][]
  height?: number
}

export function ResultsTable({ columns, rows, height = 440 }: ResultsTableProps) {
  const scroller = useRef<HTMLDivElement>(null)
  const [scrollTop, setScrollTop] = useState(0)
  const [viewport, setViewport] = useState(height)

  useLayoutEffect(() => {
    const el = scroller.current
    if (!el) return
    setViewport(el.clientHeight)
    const observer = new ResizeObserver(() => setViewport(el.clientHeight))
    observer.observe(el)
    return () => observer.disconnect()
  }, [])

  // New results start at the top.
  // biome-ignore lint/correctness/useExhaustiveDependencies: rows is the trigger
  useLayoutEffect(() => {
    if (scroller.current) scroller.current.scrollTop = 0
    setScrollTop(0)
  }, [rows])

  const onScroll = useCallback(() => setScrollTop(scroller.current?.scrollTop ?? 0), [])

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN)
  const last = Math.min(rows.length, Math.ceil((scrollTop + viewport) / ROW_HEIGHT) + OVERSCAN)
  const cell = {
    padding: '0 10px',
    height: ROW_HEIGHT,
    whiteSpace: 'nowrap',
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    fontSize: 13,
    borderBottom: '1px solid var(--mantine-color-gray-2)',
    textAlign: 'left',
  } as const

  const visible = []
  for (let i = first; i < last; i++) {
    const row = rows[i]
    visible.push(
      <tr key={i} aria-rowindex={i + 2} data-testid="result-row" style={{ height: ROW_HEIGHT }}>
        {columns.map((column, c) => {
          const value = row[c]
          const empty = value === null || value === undefined
          return (
            <td
              key={column + String(c)}
              title={formatCell(value)}
              style={{
                ...cell,
                fontFamily: 'var(--mantine-font-family-monospace)',
                color: empty ? '#495057' : undefined,
                fontStyle: empty ? 'italic' : undefined,
              }}
            >
              {formatCell(value)}
            </td>
          )
        })}
      </tr>,
    )
  }

  return (
    <Box>
      <Box
        ref={scroller}
        onScroll={onScroll}
        tabIndex={0}
        role="region"
        aria-label={`Query results, ${rows.length} rows`}
        data-testid="results-scroller"
        style={{
          height: Math.min(height, (rows.length + 1) * ROW_HEIGHT + 2),
          overflow: 'auto',
          border: '1px solid var(--mantine-color-gray-3)',
          borderRadius: 6,
        }}
      >
        <table
          aria-rowcount={rows.length + 1}
          style={{
            tableLayout: 'fixed',
            borderCollapse: 'separate',
            borderSpacing: 0,
            width: `max(100%, ${columns.length * COLUMN_WIDTH}px)`,
          }}
        >
          <thead style={{ position: 'sticky', top: 0, zIndex: 1, background: 'var(--mantine-color-gray-1)' }}>
            <tr aria-rowindex={1}>
              {columns.map((column, c) => (
                <th key={column + String(c)} scope="col" style={{ ...cell, fontWeight: 600 }}>
                  {column}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {first > 0 ? (
              <tr style={{ height: first * ROW_HEIGHT }}>
                <td colSpan={columns.length} style={{ padding: 0 }} />
              </tr>
            ) : null}
            {visible}
            {last < rows.length ? (
              <tr style={{ height: (rows.length - last) * ROW_HEIGHT }}>
                <td colSpan={columns.length} style={{ padding: 0 }} />
              </tr>
            ) : null}
          </tbody>
        </table>
      </Box>
      <Text size="xs" c="dimmed" mt={4}>
        {rows.length === 1 ? '1 row' : `${rows.length.toLocaleString('en-US')} rows`}
      </Text>
    </Box>
  )
}

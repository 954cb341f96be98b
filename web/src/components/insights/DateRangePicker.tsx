// PostHog's date range control: a preset (last 7 days, this month, all time…) or a custom pair of dates, as a
// DateRange node fragment `{date_from, date_to}`.
import { Group, Select, TextInput } from '@mantine/core'

export interface DateRange {
  date_from?: string | null
  date_to?: string | null
}

export const DATE_PRESETS = [
  { value: 'dStart', label: 'Today' },
  { value: '-1d', label: 'Yesterday' },
  { value: '-24h', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-14d', label: 'Last 14 days' },
  { value: '-30d', label: 'Last 30 days' },
  { value: '-90d', label: 'Last 90 days' },
  { value: '-180d', label: 'Last 180 days' },
  { value: 'mStart', label: 'This month' },
  { value: '-1mStart', label: 'Previous month' },
  { value: 'yStart', label: 'Year to date' },
  { value: 'all', label: 'All time' },
  { value: 'custom', label: 'Custom dates…' },
]

const ISO_DATE = /^\d{4}-\d{2}-\d{2}/

/** The preset a range is, or `custom` for explicit dates. */
export function presetOf(range: DateRange | undefined): string {
  const from = range?.date_from ?? '-7d'
  if (ISO_DATE.test(from) || (range?.date_to && ISO_DATE.test(range.date_to))) return 'custom'
  if (from === '-1d' && range?.date_to === '-1d') return '-1d'
  return DATE_PRESETS.some((p) => p.value === from) ? from : 'custom'
}

export function DateRangePicker({
  value,
  onChange,
  label = 'Date range',
}: {
  value: DateRange | undefined
  onChange: (range: DateRange) => void
  label?: string
}) {
  const preset = presetOf(value)
  const today = new Date().toISOString().slice(0, 10)
  return (
    <Group gap="xs" align="flex-end" wrap="nowrap">
      <Select
        label={label}
        data={DATE_PRESETS}
        value={preset}
        allowDeselect={false}
        w={170}
        onChange={(v) => {
          if (!v) return
          if (v === 'custom')
            onChange({
              date_from: value?.date_from && ISO_DATE.test(value.date_from) ? value.date_from : today,
              date_to: value?.date_to ?? today,
            })
          else if (v === '-1d') onChange({ date_from: '-1d', date_to: '-1d' })
          else onChange({ date_from: v, date_to: null })
        }}
      />
      {preset === 'custom' ? (
        <>
          <TextInput
            type="date"
            label="From"
            value={(value?.date_from ?? '').slice(0, 10)}
            onChange={(e) => onChange({ ...value, date_from: e.currentTarget.value || null })}
            w={150}
          />
          <TextInput
            type="date"
            label="To"
            value={(value?.date_to ?? '').slice(0, 10)}
            onChange={(e) => onChange({ ...value, date_to: e.currentTarget.value || null })}
            w={150}
          />
        </>
      ) : null}
    </Group>
  )
}

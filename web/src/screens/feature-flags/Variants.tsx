// Served value: a boolean flag (with one optional payload) or a multivariate flag with variants, each with a
// rollout percentage (summing to 100) and a JSON payload checked as it is typed.
import {
  ActionIcon,
  Button,
  Card,
  Group,
  JsonInput,
  NumberInput,
  SegmentedControl,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { evenSplit, type Filters, type Variant } from './model'

function Payload({
  label,
  value,
  onChange,
  error,
}: {
  label: string
  value: string
  onChange: (v: string) => void
  error?: string
}) {
  return (
    <JsonInput
      label={label}
      placeholder='{"key": "value"}'
      value={value}
      onChange={onChange}
      validationError="Payload must be valid JSON"
      error={error}
      autosize
      minRows={2}
      maxRows={10}
    />
  )
}

export function Variants({
  filters,
  onChange,
  errors,
}: {
  filters: Filters
  onChange: (f: Filters) => void
  errors: Record<string, string>
}) {
  const variants = filters.multivariate?.variants ?? []
  const payloads = filters.payloads ?? {}
  const multivariate = variants.length > 0
  const setVariants = (next: Variant[], renamed?: [string, string]) => {
    const nextPayloads = { ...payloads }
    if (renamed && renamed[0] in nextPayloads) {
      nextPayloads[renamed[1]] = nextPayloads[renamed[0]]
      delete nextPayloads[renamed[0]]
    }
    onChange({ ...filters, multivariate: next.length ? { variants: next } : null, payloads: nextPayloads })
  }
  const setPayload = (key: string, v: string) => onChange({ ...filters, payloads: { ...payloads, [key]: v } })
  const sum = variants.reduce((s, v) => s + (Number(v.rollout_percentage) || 0), 0)

  return (
    <Stack gap="sm">
      <Title order={2} size="h4">
        Served value
      </Title>
      <SegmentedControl
        aria-label="Flag type"
        w="fit-content"
        data={[
          { value: 'boolean', label: 'Release toggle (boolean)' },
          { value: 'multivariate', label: 'Multiple variants with rollout percentages (A/B/n test)' },
        ]}
        value={multivariate ? 'multivariate' : 'boolean'}
        onChange={(v) => {
          if (v === 'multivariate' && !multivariate) {
            const split = evenSplit(2)
            setVariants([
              { key: 'control', name: '', rollout_percentage: split[0] },
              { key: 'test', name: '', rollout_percentage: split[1] },
            ])
          } else if (v === 'boolean') {
            // variant overrides make no sense without variants
            onChange({
              ...filters,
              multivariate: null,
              groups: filters.groups.map((g) => ({ ...g, variant: null })),
              payloads: payloads.true ? { true: payloads.true } : {},
            })
          }
        }}
      />
      {multivariate ? (
        <Card withBorder padding="md">
          <Stack gap="sm">
            {variants.map((variant, i) => {
              const n = i + 1
              return (
                // biome-ignore lint/suspicious/noArrayIndexKey: variants are edited in place, keys change as typed
                <Stack key={i} gap="xs" data-testid="variant" role="group" aria-label={`Variant ${n}`}>
                  <Group align="flex-start" gap="xs" wrap="nowrap">
                    <TextInput
                      label={`Variant ${n} key`}
                      value={variant.key}
                      error={errors[`variant-${i}`]}
                      onChange={(e) => {
                        const key = e.currentTarget.value
                        setVariants(
                          variants.map((v, j) => (j === i ? { ...v, key } : v)),
                          [variant.key, key],
                        )
                      }}
                      w={200}
                    />
                    <TextInput
                      label={`Variant ${n} description`}
                      value={variant.name ?? ''}
                      onChange={(e) => {
                        const name = e.currentTarget.value
                        setVariants(variants.map((v, j) => (j === i ? { ...v, name } : v)))
                      }}
                      style={{ flex: 1 }}
                    />
                    <NumberInput
                      label={`Variant ${n} rollout`}
                      value={variant.rollout_percentage}
                      min={0}
                      max={100}
                      suffix="%"
                      onChange={(v) => {
                        const pct = typeof v === 'number' ? v : Number(v) || 0
                        setVariants(variants.map((x, j) => (j === i ? { ...x, rollout_percentage: pct } : x)))
                      }}
                      w={120}
                    />
                    <ActionIcon
                      mt={26}
                      variant="subtle"
                      color="red"
                      size="lg"
                      disabled={variants.length <= 2}
                      aria-label={`Remove variant ${n}`}
                      onClick={() => {
                        const rest = variants.filter((_, j) => j !== i)
                        const split = evenSplit(rest.length)
                        setVariants(rest.map((v, j) => ({ ...v, rollout_percentage: split[j] })))
                      }}
                    >
                      ×
                    </ActionIcon>
                  </Group>
                  <Payload
                    label={`Variant ${n} payload`}
                    value={payloads[variant.key] ?? ''}
                    onChange={(v) => setPayload(variant.key, v)}
                    error={errors[`payload-${variant.key}`]}
                  />
                </Stack>
              )
            })}
            <Group justify="space-between">
              <Group gap="xs">
                <Button
                  size="xs"
                  variant="light"
                  onClick={() => {
                    const split = evenSplit(variants.length + 1)
                    setVariants(
                      [...variants, { key: `test-${variants.length}`, name: '', rollout_percentage: 0 }].map(
                        (v, j) => ({ ...v, rollout_percentage: split[j] }),
                      ),
                    )
                  }}
                >
                  Add variant
                </Button>
                <Button
                  size="xs"
                  variant="subtle"
                  onClick={() => {
                    const split = evenSplit(variants.length)
                    setVariants(variants.map((v, j) => ({ ...v, rollout_percentage: split[j] })))
                  }}
                >
                  Distribute equally
                </Button>
              </Group>
              <Text size="sm" c={sum === 100 ? 'dimmed' : 'red'} role={sum === 100 ? undefined : 'alert'}>
                {errors.variants ?? `Total: ${sum}%`}
              </Text>
            </Group>
          </Stack>
        </Card>
      ) : (
        <Payload
          label="Payload (served when the flag is enabled)"
          value={payloads.true ?? ''}
          onChange={(v) => setPayload('true', v)}
          error={errors['payload-true']}
        />
      )}
    </Stack>
  )
}

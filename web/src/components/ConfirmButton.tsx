// A button that asks first: a dialog with the consequence in words, confirming runs `onConfirm`; a refusal from
// the server stays in the dialog in the server's own words.
import { Button, type ButtonProps, Group, Modal, Stack, Text } from '@mantine/core'
import { type ReactNode, useState } from 'react'
import { errorText } from './States'

export function ConfirmButton({
  children,
  title,
  message,
  confirmLabel,
  onConfirm,
  ...button
}: ButtonProps & {
  children: ReactNode
  title: string
  message: ReactNode
  confirmLabel: string
  onConfirm: () => Promise<unknown>
}) {
  const [open, setOpen] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const close = () => {
    setOpen(false)
    setError(null)
  }
  return (
    <>
      <Button color="red" variant="light" {...button} onClick={() => setOpen(true)}>
        {children}
      </Button>
      <Modal opened={open} onClose={close} closeButtonProps={{ 'aria-label': 'Close' }} title={title}>
        <Stack gap="sm">
          <Text size="sm">{message}</Text>
          {error ? (
            <Text c="red" size="sm" role="alert" data-testid="confirm-error">
              {errorText(error)}
            </Text>
          ) : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button
              color="red"
              loading={busy}
              onClick={async () => {
                setBusy(true)
                setError(null)
                try {
                  await onConfirm()
                  setOpen(false)
                } catch (e) {
                  setError(e)
                } finally {
                  setBusy(false)
                }
              }}
            >
              {confirmLabel}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  )
}

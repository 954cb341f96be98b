// A short confirmation in the corner, with a close button screen readers can name.
import { notifications } from '@mantine/notifications'

export function notify(message: string, color: 'teal' | 'red' = 'teal') {
  notifications.show({ message, color, closeButtonProps: { 'aria-label': 'Close' } })
}

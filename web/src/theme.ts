import { type CSSVariablesResolver, createTheme, DEFAULT_THEME } from '@mantine/core'

export const theme = createTheme({
  primaryColor: 'indigo',
  // Contrast that passes WCAG AA on white for filled buttons and links.
  primaryShade: 8,
  // Filled colours pick black or white text by their luminance (white on green.6 is 2.4:1).
  autoContrast: true,
  defaultRadius: 'sm',
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
  fontFamilyMonospace: 'ui-monospace, SFMono-Regular, Menlo, monospace',
  components: {
    // Links are told apart from text by more than their colour.
    Anchor: { defaultProps: { underline: 'always' } },
    // Every notification's close button has a name, however the notification was shown.
    Notification: { defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } },
    Modal: { defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } },
    Drawer: { defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } },
  },
})

/** Secondary text dark enough for WCAG AA (Mantine's default grey is 3.3:1 on white). */
export const cssVariables: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    // Light variants (badges, light buttons) write their text in the colour's darkest shade darkened further:
    // Mantine's default (shade 6 on its tint) and even shade 9 (green: 3.9:1) are under AA's 4.5:1.
    ...Object.fromEntries(
      Object.keys(DEFAULT_THEME.colors).map((c) => [
        `--mantine-color-${c}-light-color`,
        `color-mix(in srgb, var(--mantine-color-${c}-9) 65%, black)`,
      ]),
    ),
  },
  dark: {},
})

// Debian's Chromium driven by playwright-core, as every browser test launches it. CI installs the package
// (`.ci/run`); without it the browser tests skip locally and fail in CI.
import fs from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const hasChromium = fs.existsSync(CHROMIUM)
if (!hasChromium && process.env.CI) throw new Error(`Chromium is required in CI (${CHROMIUM} missing)`)

/** Headless, no sandbox (root), and none of the background traffic this machine's closed network refuses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

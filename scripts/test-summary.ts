// The CI summary of one vitest run, read from its JSON report (.test-results/vitest.json). A test file that fails
// to load (a missing import, a missing fixture, a throw at the top) has no failed test in it, only a failed file:
// counting tests alone would let such a run look green, so failed files are named and counted too.
import fs from 'node:fs'
import { pathToFileURL } from 'node:url'

interface AssertionResult {
  fullName?: string
  title?: string
  status: string
  failureMessages?: string[]
}

interface FileResult {
  name: string
  status: string
  message?: string
  assertionResults?: AssertionResult[]
}

export interface VitestReport {
  numPassedTests: number
  numFailedTests: number
  numPendingTests: number
  numTodoTests: number
  success?: boolean
  testResults: FileResult[]
}

export interface Summary {
  ok: boolean
  lines: string[]
}

const firstLine = (text: string | undefined) => (text ?? '').trim().split('\n')[0] ?? ''

/** The lines to print and whether the run passed; `root` is cut from file names to keep them short. */
export function summarize(report: VitestReport, label: string, root = ''): Summary {
  const relative = (name: string) => (root && name.startsWith(`${root}/`) ? name.slice(root.length + 1) : name)
  const files = report.testResults
  const failedFiles = files.filter((f) => f.status === 'failed')
  const skipped = report.numPendingTests + report.numTodoTests
  const lines = [
    `${label}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped` +
      ` in ${files.length} files (${failedFiles.length} failed)`,
  ]
  for (const file of failedFiles) {
    const failedTests = (file.assertionResults ?? []).filter((a) => a.status === 'failed')
    if (failedTests.length === 0) {
      // Nothing ran in it: the file itself did not load (or a hook outside every test threw).
      lines.push(`  FAILED FILE ${relative(file.name)}: ${firstLine(file.message) || 'failed without a message'}`)
      continue
    }
    lines.push(`  FAILED ${relative(file.name)}: ${failedTests.length} failed`)
    for (const test of failedTests) {
      lines.push(`    ✗ ${test.fullName ?? test.title ?? '(unnamed)'}: ${firstLine(test.failureMessages?.[0])}`)
    }
  }
  const ok = failedFiles.length === 0 && report.numFailedTests === 0 && report.success !== false
  if (!ok && failedFiles.length === 0) lines.push('  the run did not succeed (see the output above)')
  return { ok, lines }
}

function main(argv: string[]): number {
  const [file, label = 'tests'] = argv
  if (!file) {
    process.stderr.write('usage: tsx scripts/test-summary.ts <vitest.json> [label]\n')
    return 2
  }
  if (!fs.existsSync(file)) {
    process.stdout.write(`${label}: FAILED: no test report at ${file} (vitest did not finish)\n`)
    return 1
  }
  const report = JSON.parse(fs.readFileSync(file, 'utf8')) as VitestReport
  const { ok, lines } = summarize(report, label, process.cwd())
  process.stdout.write(`${lines.join('\n')}\n`)
  return ok ? 0 : 1
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(process.argv.slice(2))
}

import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { cli } from './cli/helpers.js'

// The README is the first thing a new user reads: what it names must exist.

const root = path.resolve(import.meta.dirname, '..')
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')

describe('the README', () => {
  it('names every command of the command line', async () => {
    const help = await cli(['--help'])
    expect(help.code).toBe(0)
    const commands = [...help.stdout.split(/^Commands:$/m)[1].matchAll(/^ {2}(\w[\w-]*)/gm)]
      .map((m) => m[1])
      .filter((name) => name !== 'help')
    expect(commands).toEqual(expect.arrayContaining(['start', 'migrate', 'keys']))
    for (const name of commands) expect(readme, `README names \`${name}\``).toContain(`\`${name}`)
  })

  it('links only to files in the repository', () => {
    const links = [...readme.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)].map((m) => m[1]).filter((l) => !/^\w+:/.test(l))
    expect(links.length).toBeGreaterThan(0)
    for (const link of links) expect(fs.existsSync(path.join(root, link)), link).toBe(true)
  })
})

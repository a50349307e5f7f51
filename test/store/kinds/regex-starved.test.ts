import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

// The regex retriever's time limit is wall time (V8's watchdog). A child process searches a
// large library with a plain pattern in a loop, and is stopped (SIGSTOP) for longer than the
// limit, several times, mid-search: as on a loaded machine that gives it no core for a while. A
// slice stopped while the process had no CPU must be run again, not refused as a pattern that
// backtracks; a pattern that does backtrack is still refused.
const CHILD = `
import { RegexRetriever } from ${JSON.stringify(join(process.cwd(), 'src/store/kinds/regex-kind.ts'))}
const description = 'Send an email message to a recipient with a subject and a body. '.repeat(30)
const tools = Array.from({ length: 20000 }, (_, i) => ({
  id: 'ns.send_' + i, name: 'send_' + i, description, parameters: {}, namespace: 'ns',
}))
const retriever = new RegexRetriever(tools)
let searches = 0
const errors = []
const until = Date.now() + Number(process.argv[1])
process.send('ready')
while (Date.now() < until) {
  try {
    const found = await retriever.retrieve('^send_1', { k: 5 })
    if (found.length !== 5) errors.push('found ' + found.length)
  } catch (error) {
    errors.push(error.code + ': ' + error.message.slice(0, 120))
  }
  searches += 1
}
let refused = ''
try {
  await new RegexRetriever(tools.slice(0, 1)).retrieve('(.|.)*Z', { k: 5 })
} catch (error) {
  refused = error.code
}
process.send({ searches, errors, refused })
`

describe('regex retriever on a starved process', () => {
  it('runs again a slice stopped while the process had no CPU, and still refuses backtracking', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', CHILD, '4000'],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    )
    const messages: unknown[] = []
    const ready = new Promise<void>((resolve) =>
      child.on('message', (message) => {
        messages.push(message)
        if (message === 'ready') resolve()
      }),
    )
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
    await ready
    // Three stops of 300 ms (three times the 100 ms limit) while it searches.
    for (let stop = 0; stop < 3; stop += 1) {
      await new Promise((resolve) => setTimeout(resolve, 400))
      child.kill('SIGSTOP')
      await new Promise((resolve) => setTimeout(resolve, 300))
      child.kill('SIGCONT')
    }
    await exited
    const result = messages.at(-1) as { searches: number; errors: string[]; refused: string }
    expect(result.errors).toEqual([])
    expect(result.searches).toBeGreaterThan(0)
    expect(result.refused).toBe('INVALID_INPUT')
  }, 60_000)
})

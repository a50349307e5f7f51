/**
 * An interrupted `toolsel bench` (Ctrl-C: SIGINT, or SIGTERM) keeps the scored queries in
 * progress.jsonl and says, in one stderr line, how many and the exact command that goes on with
 * them (`--resume`; `--out <dir>` added when the run named no directory). Before, it printed
 * nothing: a user had to know of --resume and find the run's time-stamped directory.
 * A real child against a real chat-completions server: two queries answered, the third held
 * until the signal; the printed command is then run through a shell and resumes the run.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, renameSync, rmdirSync, rmSync } from 'node:fs'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../helpers/process-wait.ts'
import { ROOT } from '../helpers/start-serve.ts'
import { toolbenchQueries } from '../helpers/toolbench-queries.ts'
import {
  completion,
  startFakeChatServer,
  type FakeChatServer,
  type RecordedRequest,
} from '../models/openai/fake-chat-server.ts'

const CLI = join(ROOT, 'bin/toolsel.mjs')

const QUERIES = toolbenchQueries([
  ['Get the weather forecast for Oslo', 'Weather', 'forecast'],
  ['Send an email to Ann about lunch', 'Mail', 'send email'],
  ['Search flights from Paris to Rome', 'Flights', 'search flights'],
  ['Book a hotel room in Lisbon', 'Hotels', 'book hotel'],
])

/** The planner's answer: the instruction as one step. */
function plan(request: RecordedRequest) {
  const messages = request.body.messages as Array<{ content: string }>
  return { body: completion(JSON.stringify([messages.at(-1)!.content])) }
}

let server: FakeChatServer
let work: string
beforeAll(async () => {
  server = await startFakeChatServer()
  work = await mkdtemp(join(tmpdir(), 'toolsel-bench-interrupted-'))
  await writeFile(join(work, "queries it's.json"), JSON.stringify(QUERIES))
})
afterAll(() => server?.close())

/** The child's environment: the fake chat server, no log lines. */
function benchEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    TOOLSEL_OPENAI_BASE_URL: server.baseUrl,
    TOOLSEL_LOG_LEVEL: 'silent',
  }
}

/** `toolsel bench` of the queries file (a quote in its name), planned by the model. */
function benchArgs(...extra: string[]): string[] {
  const queries = join(work, "queries it's.json")
  const suite = ['--suite', 'toolbench-g1', '--queries', queries]
  return ['bench', ...suite, '--planner', 'llm:openai:checkpoint', '--selector', 'top1', ...extra]
}

/** Runs `node [nodeArgs] toolsel <args>` in `cwd` to its end: its exit status and stderr. */
async function runToEnd(
  args: string[],
  cwd: string,
  nodeArgs: string[] = [],
): Promise<{ status: unknown; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs, CLI, ...args], { cwd, env: benchEnv() })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const status = await new Promise((resolve) => child.once('close', resolve))
  return { status, stderr }
}

/**
 * Runs a printed `toolsel bench …` command through a shell (not spawnSync: the chat server
 * answers from this process): only the two unscored queries reach the model, and the report of
 * `dir` counts all four.
 */
async function expectResumes(command: string, cwd: string, dir: string): Promise<void> {
  server.reset()
  server.reply(plan, plan)
  const child = spawn(
    'sh',
    ['-c', command.replace(/^toolsel /, `'${process.execPath}' '${CLI}' `)],
    {
      cwd,
      env: benchEnv(),
    },
  )
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const status = await new Promise((resolve) => child.once('close', resolve))
  expect(status, stderr).toBe(0)
  expect(stderr).toContain('2 queries already scored')
  expect(server.requests).toHaveLength(2)
  const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8'))
  expect(report.suites[0].metrics.queries).toBe(4)
}

describe.skipIf(process.platform !== 'linux')('toolsel bench interrupted', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    'by %s: ends by the signal and prints the command that resumes it, which does',
    async (signal) => {
      server.reset()
      // Two queries planned, the third held until the client goes.
      server.reply(plan, plan, { body: completion('[]'), delayMs: Infinity })
      const cwd = await mkdtemp(join(work, `${signal}-`))
      const args = benchArgs()
      const child = spawn(process.execPath, [CLI, ...args], { cwd, env: benchEnv() })
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      )
      await until(
        'the third query to reach the model',
        () => server.requests.length === 3,
        60_000,
        () => stderr,
      )
      child.kill(signal)
      expect(await ended).toEqual({ code: null, signal })

      const lines = stderr.trim().split('\n')
      const last = lines.at(-1)!
      const match =
        /^Interrupted: 2 queries scored are kept in (\S+)\/progress\.jsonl; continue with: (toolsel bench .*)$/.exec(
          last,
        )
      expect(match, stderr).not.toBeNull()
      const [, dir, command] = match!
      expect(dir).toMatch(new RegExp(`^bench/out/[^/]+-toolbench-g1$`))
      expect(command).toBe(
        `toolsel bench ${args.slice(1, 4).join(' ')} '${join(work, "queries it'\\''s.json")}' ${args.slice(5).join(' ')} --out ${dir} --resume`,
      )
      expect(
        (await readFile(join(cwd, dir, 'progress.jsonl'), 'utf8')).trim().split('\n'),
      ).toHaveLength(1 + 2)

      // The command as printed, through a shell: only the two unscored queries reach the model.
      await expectResumes(command, cwd, join(cwd, dir))
    },
    120_000,
  )

  // A run that fails mid-run (not a signal): progress.jsonl made a directory while the third
  // query is planned, so its append throws EISDIR. The error's line, exit 1, and before it the
  // same resume line (was: the error alone, nothing about --resume); mended, the printed
  // command resumes.
  it('stopped by an error after two queries: prints the command that resumes it, which does', async () => {
    const cwd = await mkdtemp(join(work, 'error-'))
    const out = join(cwd, 'run')
    const progress = join(out, 'progress.jsonl')
    server.reset()
    server.reply(plan, plan, (request) => {
      renameSync(progress, `${progress}.saved`)
      mkdirSync(progress)
      return plan(request)
    })
    const args = benchArgs('--out', out)
    const { status, stderr } = await runToEnd(args, cwd)
    expect(status, stderr).toBe(1)
    const lines = stderr.trim().split('\n')
    expect(lines.at(-1)).toMatch(/^error \[EISDIR\]: /)
    const note = lines.at(-2)!
    const match =
      /^Stopped by the error below: 2 queries scored are kept in (\S+); continue with: (toolsel bench .*)$/.exec(
        note,
      )
    expect(match, stderr).not.toBeNull()
    const [, file, command] = match!
    expect(file).toBe(progress)
    expect(command).toBe(
      `toolsel bench ${args.slice(1, 4).join(' ')} '${join(work, "queries it'\\''s.json")}' ${args.slice(5).join(' ')} --resume`,
    )

    rmdirSync(progress)
    renameSync(`${progress}.saved`, progress)
    await expectResumes(command, cwd, out)
  }, 120_000)

  // An exception outside the run's promises (here a timer's callback, thrown once two queries
  // are kept in progress.jsonl, by a module the child imports first) ends the process as Node
  // does: its stack, exit 1; before the stack, the resume line (was: the stack alone).
  it('stopped by an uncaught exception after two queries: prints the command that resumes it, which does', async () => {
    const cwd = await mkdtemp(join(work, 'uncaught-'))
    const out = join(cwd, 'run')
    const progress = join(out, 'progress.jsonl')
    const crash = join(cwd, 'crash.mjs')
    await writeFile(
      crash,
      `import { readFileSync } from 'node:fs'
const timer = setInterval(() => {
  let lines = 0
  try { lines = readFileSync(${JSON.stringify(progress)}, 'utf8').trim().split('\\n').length } catch {}
  if (lines < 3) return
  clearInterval(timer)
  throw new Error('a timer callback failed')
}, 10)
timer.unref()
`,
    )
    server.reset()
    server.reply(plan, plan, { body: completion('[]'), delayMs: Infinity })
    const args = benchArgs('--out', out)
    const { status, stderr } = await runToEnd(args, cwd, ['--import', crash])
    expect(status, stderr).toBe(1)
    const note = stderr.split('\n').find((line) => line.startsWith('Stopped by'))
    const match =
      /^Stopped by the uncaught exception below: 2 queries scored are kept in (\S+); continue with: (toolsel bench .*)$/.exec(
        note ?? '',
      )
    expect(match, stderr).not.toBeNull()
    expect(stderr.slice(stderr.indexOf(note!))).toContain('Error: a timer callback failed')
    const [, file, command] = match!
    expect(file).toBe(progress)
    await expectResumes(command, cwd, out)
  }, 120_000)

  // All four queries scored, then report.json cannot be written (a directory stands there): the
  // error's line, exit 1, and before it the resume line (was: the error alone); mended, the
  // printed command scores none again and writes the report.
  it('a report that fails to be written after all queries: prints the command that writes it', async () => {
    const cwd = await mkdtemp(join(work, 'report-'))
    const out = join(cwd, 'run')
    mkdirSync(join(out, 'report.json'), { recursive: true })
    server.reset()
    server.reply(plan, plan, plan, plan)
    const args = benchArgs('--out', out)
    const { status, stderr } = await runToEnd(args, cwd)
    expect(status, stderr).toBe(1)
    const lines = stderr.trim().split('\n')
    expect(lines.at(-1)).toMatch(/^error \[EISDIR\]: /)
    const match =
      /^The report was not written \(the error below\): 4 queries scored are kept in (\S+); continue with: (toolsel bench .*)$/.exec(
        lines.at(-2)!,
      )
    expect(match, stderr).not.toBeNull()
    rmdirSync(join(out, 'report.json'))
    server.reset()
    const child2 = spawn(
      'sh',
      ['-c', match![2].replace(/^toolsel /, `'${process.execPath}' '${CLI}' `)],
      { cwd, env: benchEnv() },
    )
    let stderr2 = ''
    child2.stderr.on('data', (chunk: Buffer) => (stderr2 += chunk.toString()))
    expect(await new Promise((resolve) => child2.once('close', resolve)), stderr2).toBe(0)
    expect(stderr2).toContain('4 queries already scored')
    expect(server.requests).toHaveLength(0)
    const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8'))
    expect(report.suites[0].metrics.queries).toBe(4)
  }, 120_000)

  // --resume of a run that scored none, stopped by an error before its first answer: was
  // "0 queries scored are kept in …".
  it('--resume with none scored, stopped by an error: says none is scored', async () => {
    const cwd = await mkdtemp(join(work, 'none-'))
    const out = join(cwd, 'run')
    const progress = join(out, 'progress.jsonl')
    server.reset()
    server.reply((request) => {
      rmSync(progress)
      mkdirSync(progress)
      return plan(request)
    })
    const args = benchArgs('--out', out, '--resume')
    const { status, stderr } = await runToEnd(args, cwd)
    expect(status, stderr).toBe(1)
    const lines = stderr.trim().split('\n')
    expect(lines.at(-1)).toMatch(/^error \[EISDIR\]: /)
    expect(lines.at(-2)).toBe(
      `Stopped by the error below: no query is scored yet (${progress} holds none); run it again with: toolsel bench ${args.slice(1, 4).join(' ')} '${join(work, "queries it'\\''s.json")}' ${args.slice(5).join(' ')}`,
    )
  }, 120_000)
})

/** `toolsel bench`: run the offline quality benchmark and write report.json, summary.md, report.html. */
import { rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { FILE_SUITE_PREFIX } from '../bench/suites/functions-suite.ts'
import { EXAMPLES_FILE_PREFIX } from '../bench/examples-from-file.ts'
import { assertReadableFile } from '../read-text-file.ts'
import { jsonText, terminalLine } from '../terminal-text.ts'
import { pathExists } from '../store/path-exists.ts'
import { createComponents } from '../components.ts'
import { ToolselService } from '../service/toolsel-service.ts'
import { ToolselError } from '../errors.ts'
import type { BenchRunSettings } from '../bench/bench-report.ts'
import { createOracleCountRunner, createPipelineRunner } from '../bench/case-runner.ts'
import { renderSummary, writeReport } from '../bench/report/index.ts'
import { runBench } from '../bench/run-bench.ts'
import { openRunProgress } from '../bench/run-progress.ts'
import { EXAMPLES_MODES, LIBRARY_MODES } from '../bench/suites/index.ts'
import {
  commandConfig,
  maxFileBytesFlag,
  dataDirFlag,
  numberFlag,
  parseCommand,
  type CommandIO,
  printConfig,
  shellWord,
} from './cli-options.ts'
import { createProgress, progressOutput } from './progress.ts'
import { noteOnSignal } from '../signal-cleanup.ts'
import { HELP as BENCH_HELP, OPTIONS } from './bench-help.ts'

export { HELP as BENCH_HELP, OPTIONS } from './bench-help.ts'

export async function benchCommand(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseCommand(argv, OPTIONS, 'bench')
  if (values.help) return (io.stdout(`${BENCH_HELP}\n`), 0)
  if (positionals.length > 0) throw invalid(`unexpected argument "${positionals[0]}"`)
  const { config, logger } = await commandConfig(
    values,
    {
      'bench.dataDir': dataDirFlag(values.data, 'bench'),
      'library.maxFileBytes': maxFileBytesFlag(values['max-file-bytes']),
      'retrieve.k': numberFlag(values.k, 'k'),
      'retrieve.bm25.tau': numberFlag(values.tau, 'tau'),
      'retrieve.retriever': values.retriever,
      // Suites build their indexes in memory: build what the requested retriever needs.
      'retrieve.build':
        // (bm25 is always built; `auto` is whatever the library was built with)
        values.retriever === 'auto' || values.retriever === 'bm25' ? undefined : values.retriever,
      'plan.planner': values.planner,
      'select.selector': values.selector,
    },
    io,
  )
  if (values['print-config']) return printConfig(config, io)
  const suite = values.suite ?? 'all'
  if (suite === 'all' && (values.queries || values.tools)) {
    throw invalid("--queries and --tools name one suite's files; use them with --suite <name>")
  }
  const examplesFile = values.examples?.startsWith(EXAMPLES_FILE_PREFIX)
    ? values.examples.slice(EXAMPLES_FILE_PREFIX.length)
    : undefined
  if (examplesFile !== undefined) {
    if (suite === 'all')
      throw invalid("--examples file:<path> names one library's ids; use it with --suite <name>")
    // Looked up, not opened: a pipe (`file:<(…)`, a FIFO) opened and closed here lost its writer
    // and its text before the run read it.
    await assertReadableFile(examplesFile, '--examples file', { opened: false })
  }
  const baseline = oneOf(values.baseline, ['oracle-count'] as const, 'baseline')
  const name =
    values.name ??
    `${new Date().toISOString().replace(/[:.]/g, '-')}-${suite.replace(/[^a-zA-Z0-9._-]+/g, '-')}`
  const settings: BenchRunSettings = {
    suite,
    name,
    dataDir: config.bench.dataDir,
    queries: values.queries,
    tools: values.tools,
    libraryMode:
      oneOf(values['library-mode'], LIBRARY_MODES, 'library-mode') ??
      (values.tools && suite.startsWith('toolbench') ? 'corpus' : 'union'),
    unmappable: oneOf(values.unmappable, ['drop', 'keep'] as const, 'unmappable') ?? 'drop',
    baseline,
    planner: baseline ? 'none' : config.plan.planner,
    selector: baseline ?? config.select.selector,
    retriever: config.retrieve.retriever,
    k: config.retrieve.k,
    tau: config.retrieve.bm25.tau,
    limit: positiveInteger(values.limit, 'limit'),
    swapLibrary: values.library,
    examples:
      examplesFile !== undefined
        ? 'train'
        : (oneOf(values.examples, EXAMPLES_MODES, 'examples') ?? 'none'),
    ...(examplesFile !== undefined && { examplesFile }),
    compact: values.compact ?? false,
    queryTimeoutMs: positiveInteger(values['query-timeout'], 'query-timeout'),
    concurrency: positiveInteger(values.concurrency, 'concurrency') ?? 1,
  }
  if (values.resume && values.name === undefined && values.out === undefined) {
    throw invalid('--resume continues a named run; give the same --name or --out as the first run')
  }
  // A file the user names is read, not skipped like a suite whose data is not downloaded: a
  // missing one wrote a report of no queries (exit 1). Looked up, not opened: a pipe
  // (`file:<(…)`) opened and closed here lost its text before the suite read it.
  if (suite.startsWith(FILE_SUITE_PREFIX))
    await assertReadableFile(suite.slice(FILE_SUITE_PREFIX.length), 'benchmark file', {
      opened: false,
    })
  const components = createComponents(config, logger)
  // An unknown planner or selector (a typo) is refused before any query: was each of the suite's
  // queries failing on it, then the error, and an output directory of failed results left.
  // Model-backed ones are created lazily: nothing is loaded here.
  if (!baseline) {
    components.planner(settings.planner)
    components.selector(settings.selector)
  }
  const service = new ToolselService(config, logger, components)
  const request = { retriever: settings.retriever, k: settings.k }
  const runner = baseline
    ? createOracleCountRunner(service, request)
    : createPipelineRunner(
        service,
        { ...request, planner: settings.planner, selector: settings.selector },
        { queryTimeoutMs: settings.queryTimeoutMs },
      )

  const dir = values.out ?? join(config.bench.outDir, name)
  // Was: error [EEXIST]: EEXIST: file already exists, mkdir '<dir>' (exit 1), Node's words.
  if ((await stat(dir).catch(() => undefined))?.isDirectory() === false) {
    throw invalid(
      `The report directory "${dir}" is a file, not a directory: name a directory (or one to create) with --out`,
    )
  }
  const fresh = !(await pathExists(dir))
  const runProgress = await openRunProgress(dir, settings, config, values.resume ?? false)
  if (values.resume) {
    io.stderr(`Resuming ${runProgress.file}: ${runProgress.resumed} queries already scored\n`)
  }
  const progress = createProgress(`bench ${suite}`, progressOutput(io))
  let scored = 0
  // Ctrl-C, SIGTERM, SIGHUP: the process still ends by the signal (exit 130 for Ctrl-C), the
  // scored queries kept in progress.jsonl; this line says how to go on (was: nothing at all).
  const noteResume = (lead: string): void => {
    const kept = runProgress.resumed + scored
    // None scored (a --resume of a run that scored none, a signal before the first answer): was
    // "0 queries scored are kept in …", as if there were some to continue from.
    const what =
      kept === 0
        ? `no query is scored yet (${runProgress.file} holds none); run it again with`
        : `${kept} queries scored are kept in ${runProgress.file}; continue with`
    io.stderr(
      // The user's words and paths: no escape sequence of them reaches the terminal.
      `${io.stderrIsTTY ? '\n' : ''}${terminalLine(`${lead}: ${what}: ${resumeCommand(argv, values, dir)}`)}\n`,
    )
  }
  const stopSignalNote = noteOnSignal(() => noteResume('Interrupted'))
  // An exception outside the run's promises (a timer's callback, a stream's 'error' event with no
  // listener) ends the process as Node does (its stack, exit 1: a monitor changes nothing of
  // that), the same line first (was: the stack alone, nothing about --resume).
  const noteCrash = (): void => noteResume('Stopped by the uncaught exception below')
  process.on('uncaughtExceptionMonitor', noteCrash)
  const stopNoting = (): void => {
    stopSignalNote()
    process.off('uncaughtExceptionMonitor', noteCrash)
  }
  const report = await runBench({
    settings,
    config,
    runner,
    completed: runProgress.completed,
    onResult: (result) => {
      // Counted once kept: an append that throws (the note then says how many are kept).
      runProgress.append(result)
      scored += 1
    },
    onProgress: (done, total, label) => progress.update(done, total, label),
    onNote: (text) => io.stderr(`${text}\n`),
  }).catch(async (error: unknown) => {
    // Failed before scoring a query (a file that does not parse): nothing to resume, so nothing
    // is left behind (was: an output directory holding only progress.jsonl).
    stopNoting()
    if (scored === 0 && runProgress.resumed === 0 && !values.resume)
      await rm(fresh ? dir : runProgress.file, { recursive: true, force: true })
    // Failed mid-run (progress.jsonl no longer writable, a bug): the scored queries are kept, and
    // the same line as a signal's says how to go on once the cause is mended (was: the error
    // alone). Before the error's line, which main prints.
    else noteResume('Stopped by the error below')
    throw error
  })
  const queries = report.suites.reduce((sum, item) => sum + item.metrics.queries, 0)
  progress.done(
    `${queries} queries in ${report.suites.length} suites (${report.skipped.length} splits skipped)`,
  )
  await writeReport(report, dir)
    .catch((error: unknown) => {
      // Every query scored and kept: --resume scores none again and writes the report (was: the
      // error alone).
      noteResume('The report was not written (the error below)')
      throw error
    })
    .finally(stopNoting)
  io.stdout(values.json ? `${jsonText(JSON.stringify(report, null, 2))}\n` : renderSummary(report))
  io.stderr(`Reports written to ${dir}\n`)
  const noData =
    report.skipped.length > 0 && report.skipped.every(({ reason }) => /not found/.test(reason))
  if (report.suites.length > 0) {
    // `--suite all` without the data (a fresh clone, `../shared/data` absent) ran the demo alone
    // and exited 0 after 20 "not found" lines, nothing saying which setting to change.
    if (noData && report.suites.every((suite) => suite.name === 'demo'))
      io.stderr(
        noDataHint(
          settings.dataDir,
          "Only the demo suite ran: none of the other suites' data is",
          '.',
        ),
      )
    return 0
  }
  if (noData)
    io.stderr(
      noDataHint(
        settings.dataDir,
        'No suite ran: none of its data is',
        ', or run --suite demo, which needs none.',
      ),
    )
  return 1
}

/**
 * The command that continues this run: its words again (shell-quoted), `--out <dir>` when it named
 * no --name or --out (its directory's name was made of the time), and `--resume`.
 */
function resumeCommand(
  argv: readonly string[],
  values: { name?: string; out?: string; resume?: boolean },
  dir: string,
): string {
  const words = ['toolsel', 'bench', ...argv.map(shellWord)]
  if (values.name === undefined && values.out === undefined) words.push('--out', shellWord(dir))
  if (!values.resume) words.push('--resume')
  return words.join(' ')
}

/** What to do when no suite that needs data ran because none of it is under the data directory. */
function noDataHint(dataDir: string, lead: string, end: string): string {
  return (
    `${lead} under ${JSON.stringify(dataDir)} (bench.dataDir, resolved from ${process.cwd()}). ` +
    `Point --data (or TOOLSEL_DATA_DIR) at the directory that holds the benchmark data (bench/README.md)${end}\n`
  )
}

function invalid(message: string): ToolselError {
  return new ToolselError('INVALID_INPUT', `${message}. See: toolsel bench --help`)
}

function oneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  flag: string,
): T | undefined {
  if (value === undefined) return undefined
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw invalid(`--${flag} must be one of ${allowed.join(', ')}, got "${value}"`)
}

function positiveInteger(value: string | undefined, flag: string): number | undefined {
  const number = numberFlag(value, flag)
  if (number === undefined) return undefined
  if (!Number.isInteger(number) || number < 1)
    throw invalid(`--${flag} expects a positive integer, got "${value}"`)
  return number
}

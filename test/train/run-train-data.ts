/** Runs `toolsel train-data` in process and reads back what it wrote. */
import { mkdtemp, readFile, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createComponents } from '../../src/components.ts'
import type { Config } from '../../src/config/schema.ts'
import { ToolLibrary } from '../../src/library/tool-library.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { main } from '../../src/main.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { buildIndexedLibrary } from '../../src/store/library-lifecycle.ts'
import { SAMPLE_TOOLS } from '../helpers/sample-tools.ts'
import { DATA_DIR } from '../helpers/data-dir.ts'

export interface TrainDataRun {
  code: number
  dir: string
  stdout: string
  stderr: string
  /** File name → its records. */
  files: Record<string, any[]>
  card: any
}

export async function runTrainData(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<TrainDataRun> {
  const dir = await mkdtemp(join(tmpdir(), 'toolsel-train-data-'))
  let stdout = ''
  let stderr = ''
  const code = await main(['train-data', ...args, '--data', DATA_DIR, '--out', dir], {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: { TOOLSEL_LOG_LEVEL: 'silent', ...env },
  })
  const files: Record<string, any[]> = {}
  let card: any
  if (code === 0) {
    for (const name of await readdir(dir)) {
      const text = await readFile(join(dir, name), 'utf8')
      if (name.endsWith('.jsonl')) {
        files[name] = text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
      }
      if (name === 'data-card.json') card = JSON.parse(text)
    }
  }
  return { code, dir, stdout, stderr, files, card }
}

/**
 * Usage examples over SAMPLE_TOOLS for train-data runs: 4 keep their gold tools; "How is AAPL
 * doing today?" shares no content word with its gold tool, so the lexical filter drops it.
 */
export const SAMPLE_EXAMPLES = [
  {
    instruction: "What's the weather forecast for Paris this week? Email it to Ann.",
    tools: ['weather.get_forecast', 'mail.send_email'],
  },
  {
    instruction: 'Search flights from Boston to Denver on May 3, then text Bob the details by SMS.',
    tools: ['travel.search_flights', 'sms.send_sms'],
  },
  { instruction: 'Book a hotel in Rome from June 1 to June 4.', tools: ['travel.book_hotel'] },
  { instruction: 'How is AAPL doing today?', tools: ['finance.get_stock_quote'] },
  { instruction: 'Find the mail Carla sent me about the budget.', tools: ['mail.search_inbox'] },
]

/**
 * The service as it serves requests (configured reranker and selector) over SAMPLE_TOOLS, with
 * the plan fixed to one step: `select(step)` runs retrieval and the selector on that step.
 */
export async function fixedStepService(config: Config) {
  const logger = createMemoryLogger()
  let step = ''
  const service = new ToolselService(config, logger, {
    ...createComponents(config, logger),
    planner: () => ({ name: 'fixed', plan: async () => ({ steps: [step], planner: 'fixed' }) }),
  })
  await service.start([
    await buildIndexedLibrary(new ToolLibrary('sample-tools', SAMPLE_TOOLS), config),
  ])
  return (fixed: string) => {
    step = fixed
    return service.select({ instruction: 'unused: the plan is fixed' })
  }
}

/** Runs `toolsel train-data` in process and reads back what it wrote. */
import { mkdtemp, readFile, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { main } from '../../src/main.ts'
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

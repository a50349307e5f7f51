/**
 * `--print-config` on every command: the merged configuration on stdout, exit 0, and nothing else
 * done. `libraries delete <name> --print-config` deleted the library and `snapshot <dir>
 * --print-config` wrote a snapshot (round 26); `models` ignored the flag. Secrets are printed as
 * `***` (train and train-data printed the config's keys as they were).
 */
import { mkdtemp, readdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { COMMANDS } from '../../src/main.ts'
import { pathExists } from '../../src/store/path-exists.ts'
import { runCli } from './run-cli.ts'
import { indexDirEntries } from '../helpers/index-dir-entries.ts'

const fixture = new URL('../fixtures/formats/postman-collection.json', import.meta.url).pathname

describe('--print-config', () => {
  it('prints the merged config on every command, its secrets as ***, and does nothing else', async () => {
    const work = await mkdtemp(join(tmpdir(), 'toolsel-print-config-'))
    const adminKey = 'admin-secret-0123456789abcdef0123456789'
    const apiKey = 'openai-secret-0123456789abcdef'
    const configFile = join(work, 'config.json')
    await writeFile(
      configFile,
      JSON.stringify({ auth: { adminKey }, models: { openai: { apiKey } } }),
    )
    const indexDir = join(work, 'indexes')
    expect((await runCli(['index', fixture, '--name', 'shop', '--index-dir', indexDir])).code).toBe(
      0,
    )
    const untouched = join(work, 'untouched')
    const withIndexDir = ['--index-dir', indexDir]
    const runs: Record<string, string[][]> = {
      serve: [['serve', '--port', '0', ...withIndexDir]],
      index: [['index', fixture, '--name', 'other', ...withIndexDir]],
      libraries: [['libraries', 'delete', 'shop', ...withIndexDir]],
      select: [['select', 'add an item to the cart', '--library', 'shop', ...withIndexDir]],
      mcp: [['mcp', '--stdio', ...withIndexDir]],
      bench: [['bench', '--suite', `file:${join(work, 'queries.jsonl')}`, '--out', untouched]],
      models: [['models', 'check', untouched]],
      snapshot: [
        ['snapshot', untouched, ...withIndexDir],
        ['snapshot', 'restore', join(work, 'no-snapshot'), ...withIndexDir],
      ],
      train: [['train', '--out', join(untouched, 'model.json'), ...withIndexDir]],
      'train-data': [['train-data', 'planner', '--suite', 'toolbench-g3', '--out', untouched]],
    }
    expect(Object.keys(runs).sort()).toEqual(Object.keys(COMMANDS).sort())
    for (const argv of Object.values(runs).flat()) {
      const run = await runCli([...argv, '--config', configFile, '--print-config'])
      expect(run.code, `${argv.join(' ')}: ${run.stderr}`).toBe(0)
      expect(JSON.parse(run.stdout), argv.join(' ')).toMatchObject({
        library: {},
        retrieve: {},
        auth: { adminKey: '***' },
        models: { openai: { apiKey: '***' } },
      })
      expect(run.stdout + run.stderr, argv.join(' ')).not.toMatch(/admin-secret|openai-secret/)
    }
    expect(await indexDirEntries(indexDir)).toEqual(['shop'])
    expect(await pathExists(untouched)).toBe(false)
  })
})

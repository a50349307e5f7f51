/**
 * `serve --workers 2` with a saved demo whose files changed since it was built (a `git pull`):
 * until round 44 every worker imported the files, built the demo again and raced to save it (N×
 * the CPU; the losers' builds thrown away). Now one worker rebuilds it first and the other starts
 * once it has, loading what it saved; both answer from the rebuilt demo.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { defaultConfig } from '../../src/config/schema.ts'
import { ExampleSet } from '../../src/examples/example-set.ts'
import { importToolsFromPath } from '../../src/library/importers/index.ts'
import {
  DEMO_LIBRARY_DIR,
  DEMO_LIBRARY_NAME,
  indexTools,
  saveIndexedLibrary,
} from '../../src/store/library-lifecycle.ts'
import { callFresh } from '../helpers/fresh-request.ts'
import { startServe, type RunningServe } from '../helpers/start-serve.ts'

let scratch: string | undefined
let server: RunningServe | undefined
afterAll(async () => {
  await server?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

describe('serve --workers 2 with a saved demo whose files changed', () => {
  it('rebuilds it once (one worker), and every worker answers from the rebuilt demo', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'toolsel-workers-demo-'))
    const indexDir = join(scratch, 'indexes')
    const { tools } = await importToolsFromPath(DEMO_LIBRARY_DIR)
    const [added, kept] = tools
    // As saved before a pull: one tool of the files missing; one usage example.
    const older = await indexTools(DEMO_LIBRARY_NAME, tools.slice(1), defaultConfig(), {
      source: { path: DEMO_LIBRARY_DIR, format: 'mcp' },
      examples: ExampleSet.of([{ instruction: 'the example kept', tools: [kept!.id] }]),
    })
    await saveIndexedLibrary(indexDir, older)

    server = await startServe(['--workers', '2', '--library', DEMO_LIBRARY_NAME], {
      indexDir,
      env: { TOOLSEL_LOG_LEVEL: 'debug' },
    })
    const logs = server.logs()
    // Said as it is (round 44, doc12): the files may have changed with their tools the same, or
    // the save may record no fingerprint (before round 44): then the first worker records it.
    expect(logs).toContain(
      'one first, which rebuilds the saved demo from its files if their tools changed (else records their fingerprint), then the others',
    )
    // One import to compare, one rebuild: not one per worker.
    expect(logs.match(/Library "demo": imported .* to compare/g) ?? []).toHaveLength(1)
    expect(logs.match(/Library "demo": rebuilt from /g) ?? []).toHaveLength(1)
    // Fresh connections go to the workers in turn: each answers with the files' tools.
    for (let request = 0; request < 6; request += 1) {
      const { status, text } = await callFresh(server.url, 'GET', `/v1/libraries/demo`)
      expect(status, text).toBe(200)
      expect(JSON.parse(text)).toMatchObject({ toolCount: tools.length })
      const tool = await callFresh(server.url, 'GET', `/v1/libraries/demo/tools/${added!.id}`)
      expect(tool.status, tool.text).toBe(200)
    }
  }, 120_000)
})

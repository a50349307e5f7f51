/**
 * The OpenAPI importer imports @apidevtools/swagger-parser when it imports a spec, not when it is
 * loaded: every start (`toolsel serve`, `toolsel select`) loads the importers, and the parser with
 * its dependencies cost about 0.1 s of a start that imports no spec (round 40, bench/README.md).
 * test/fixtures/no-swagger-parser.mjs refuses the import in the child.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { runToolselChild } from '../../helpers/run-toolsel-child.ts'

const HOOK = fileURLToPath(new URL('../../fixtures/no-swagger-parser.mjs', import.meta.url))

const selectWithoutParser = (library: string) =>
  runToolselChild(
    ['select', 'book a meeting room for tomorrow', '--library', library, '--selector', 'top1'],
    { timeoutMs: 90_000, env: { NODE_OPTIONS: `--import=${HOOK}` } },
  )

describe('the OpenAPI parser is loaded only for an OpenAPI import', () => {
  it('selects over the demo without it, and an OpenAPI spec still asks for it', async () => {
    const demo = await selectWithoutParser('src/library/demo/servers')
    // Was: exit 1, "no-swagger-parser: imported by file:///…/openapi-importer.ts".
    expect(demo.stderr).not.toContain('no-swagger-parser')
    expect(demo.code, demo.stderr).toBe(0)
    expect(demo.stdout).toMatch(/calendar/i)

    const spec = await selectWithoutParser('test/fixtures/formats/petstore.yaml')
    expect(spec.stderr).toContain('no-swagger-parser: imported by')
    expect(spec.code).not.toBe(0)
  }, 120_000)
})

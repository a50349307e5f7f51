import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  groupWarnings,
  MAX_WARNING_KINDS,
  OTHER_WARNINGS,
  warningKind,
} from '../../../src/library/importers/group-warnings.ts'
import { runCli } from '../../cli/run-cli.ts'

describe('groupWarnings', () => {
  it('groups by the words without names, numbers, record and operation', () => {
    expect(warningKind('graph.json: record 12: operationId "a.b" is used as the name "a_b"')).toBe(
      'operationId "…" is used as the name "…"',
    )
    expect(
      warningKind(
        'api.yaml: line 3: GET /users/{id}: path parameter(s) "id" not declared in "parameters"; added as required strings',
      ),
    ).toBe('path parameter(s) "…" not declared in "…"; added as required strings')
  })

  it('lists everything when no kind has more than the limit', () => {
    const warnings = ['f: record 0: a "x"', 'f: record 1: a "y"', 'f: b']
    expect(groupWarnings(warnings, 2)).toEqual({ warnings })
  })

  it('lists the first of each kind, counts the rest, and bounds the number of kinds', () => {
    const warnings = [
      ...Array.from({ length: 5 }, (_, i) => `f: record ${i}: a "${i}"`),
      ...Array.from({ length: MAX_WARNING_KINDS + 5 }, (_, i) => `f: kind${'x'.repeat(i)}`),
    ]
    const grouped = groupWarnings(warnings, 2)
    expect(grouped.counts?.total).toBe(warnings.length)
    expect(grouped.counts?.kinds).toHaveLength(MAX_WARNING_KINDS)
    expect(grouped.counts?.kinds[0]).toEqual({ kind: 'a "…"', count: 5, listed: 2 })
    expect(grouped.counts?.kinds.at(-1)).toEqual({ kind: OTHER_WARNINGS, count: 7, listed: 2 })
    expect(grouped.warnings.slice(0, 3)).toEqual([
      'f: record 0: a "0"',
      'f: record 1: a "1"',
      'f: kind',
    ])
    expect(grouped.warnings.at(-1)).toBe(
      '8 more warning(s) not listed (at most 2 of each kind): 3 more of "a "…""; 5 more of "other"',
    )
  })
})

describe('toolsel index of a spec with thousands of warnings of one kind', () => {
  it('prints the first ones and counts the rest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolsel-warnings-'))
    const paths: Record<string, unknown> = {}
    for (let i = 0; i < 2000; i++) {
      paths[`/items${i}`] = { get: { operationId: `items.item${i}.get`, responses: {} } }
    }
    const spec = join(dir, 'dotted.json')
    await writeFile(
      spec,
      JSON.stringify({ openapi: '3.0.0', info: { title: 'd', version: '1' }, paths }),
    )
    const { code, stderr } = await runCli(['index', spec, '--index-dir', join(dir, 'indexes')])
    expect(code).toBe(0)
    expect(stderr.match(/is used as the name/g)).toHaveLength(21)
    expect(stderr).toContain(
      '1980 more warning(s) not listed (at most 20 of each kind): 1980 more of "operationId "…" is used as the name "…""',
    )
    expect(stderr.length).toBeLessThan(20_000)
  })
})

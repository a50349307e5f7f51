/**
 * An import that warns thousands of times the same way (Microsoft Graph: 11,422 "operationId …
 * is used as the name …" of 12,779 warnings, a 2.4 MB answer before round 28) answers a bounded
 * body that still says how many there were, valid against /openapi.json.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterEach, describe, expect, it } from 'vitest'
import { WARNINGS_PER_KIND } from '../../src/library/importers/group-warnings.ts'
import { listenApp, type ListeningApp } from '../helpers/listen-app.ts'
import { createTestApp } from './test-service.ts'

const OPERATIONS = 3000

/** An OpenAPI document whose every operationId is rewritten into a tool name (a warning each). */
function dottedSpec(operations: number) {
  const paths: Record<string, unknown> = {}
  for (let i = 0; i < operations; i++) {
    paths[`/items${i}`] = {
      get: { operationId: `items.item${i}.get`, summary: `Gets item ${i}.`, responses: {} },
    }
  }
  return { openapi: '3.0.0', info: { title: 'dotted', version: '1' }, paths }
}

let served: ListeningApp | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

describe('PUT /v1/libraries/{name} with thousands of warnings of one kind', () => {
  it('lists the first of each kind, counts them all, and keeps the answer small', async () => {
    const { app } = await createTestApp()
    served = await listenApp(app.fetch)
    const response = await fetch(`${served.url}/v1/libraries/dotted?format=openapi`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(dottedSpec(OPERATIONS)),
    })
    expect(response.status).toBe(201)
    const text = await response.text()
    // Was ~250 KB: 3,000 warnings of ~80 characters.
    expect(text.length).toBeLessThan(20_000)
    const body = JSON.parse(text)
    expect(body.toolCount).toBe(OPERATIONS)
    expect(body.warnings).toHaveLength(WARNINGS_PER_KIND + 1)
    expect(body.warnings[0]).toBe(
      'dotted.json: record 0: operationId "items.item0.get" is used as the name "items_item0_get"',
    )
    expect(body.warnings.at(-1)).toBe(
      `${OPERATIONS - WARNINGS_PER_KIND} more warning(s) not listed (at most ${WARNINGS_PER_KIND} of each kind): ${OPERATIONS - WARNINGS_PER_KIND} more of "operationId "…" is used as the name "…""`,
    )
    expect(body.warningCounts).toEqual({
      total: OPERATIONS,
      kinds: [
        {
          kind: 'operationId "…" is used as the name "…"',
          count: OPERATIONS,
          listed: WARNINGS_PER_KIND,
        },
      ],
    })

    const document = await (await fetch(`${served.url}/openapi.json`)).json()
    const schema =
      document.paths['/v1/libraries/{library}'].put.responses['201'].content['application/json']
        .schema
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema)
    expect(validate(body) ? [] : validate.errors).toEqual([])
  })
})

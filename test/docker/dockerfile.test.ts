import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ENV_VARS } from '../../src/config/env-vars.ts'
import { createTestApp } from '../server/test-service.ts'

/**
 * The Dockerfile read without docker (none here): what it copies exists and is not ignored,
 * installs skip onnxruntime-node's CUDA download except where the GPU stage asks for it, every
 * TOOLSEL_* variable is one toolsel reads, the health check calls a route that answers without a
 * key, and each runtime image has what the service reads at run time.
 */
const root = new URL('../../', import.meta.url)
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8')
// Continuation lines joined, comments dropped: one instruction per entry.
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))
const ignored = readFileSync(new URL('.dockerignore', root), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))

/** The stages: name → their instructions. */
function stages(): Map<string, string[]> {
  const result = new Map<string, string[]>()
  let current: string[] = []
  for (const line of instructions) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(line)
    if (from) result.set(from[1] ?? `stage${result.size}`, (current = []))
    current.push(line)
  }
  return result
}

describe('Dockerfile', () => {
  it('copies from the build context only paths that exist and .dockerignore keeps', () => {
    const sources = instructions
      .filter((line) => /^COPY\s/i.test(line) && !/--from=/.test(line))
      .flatMap((line) => line.split(/\s+/).slice(1, -1))
    expect(sources.length).toBeGreaterThan(5)
    for (const source of sources) {
      expect(existsSync(new URL(source, root)), source).toBe(true)
      const top = source.replace(/^\.\//, '').split('/')[0]
      expect(ignored, source).not.toContain(top)
    }
  })

  it('skips the CUDA postinstall in every npm ci, fetching it only in the GPU stage', () => {
    const all = stages()
    for (const [name, lines] of all) {
      for (const line of lines.filter((entry) => /npm ci/.test(entry))) {
        expect(line, name).toMatch(/--ignore-scripts/)
      }
    }
    const deps = all.get('deps')!.join('\n')
    expect(deps).toMatch(/ONNXRUNTIME_NODE_INSTALL=skip/)
    expect(all.get('deps-gpu')!.join('\n')).toMatch(
      /ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules\/onnxruntime-node\/script\/install\.js/,
    )
    // What `npm rebuild` builds is what package.json lets run scripts.
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'))
    const allowed = Object.entries(pkg.allowScripts as Record<string, boolean>)
      .filter(([, allow]) => allow)
      .map(([name]) => name)
      .sort()
    const rebuilt = /npm rebuild ([\w@/ -]+?)(?:\s+&&|$)/.exec(deps)![1].trim().split(/\s+/)
    expect(rebuilt.sort()).toEqual(allowed)
  })

  it('sets only TOOLSEL_* variables toolsel reads', () => {
    const names = [...new Set(dockerfile.match(/TOOLSEL_[A-Z_]+/g))]
    expect(names.length).toBeGreaterThan(5)
    for (const name of names) expect(Object.keys(ENV_VARS), name).toContain(name)
  })

  it('converts the word vectors at build time, as root, so no container start converts them', () => {
    // The default model's dense features read them (models/static/word-vectors.ts); the run-time
    // users cannot write node_modules/.cache, so a missing cache would mean 10-20 s and ~540 MiB
    // at every start. `npm ci` runs the same script through `prepare`.
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'))
    expect(pkg.scripts.prepare).toContain('node scripts/prepare-word-vectors.mjs')
    for (const name of ['cpu', 'gpu']) {
      const lines = stages().get(name)!
      const copy = lines.findIndex((line) => line.startsWith('COPY --from=build /app/dist'))
      const convert = lines.findIndex((line) =>
        /^RUN node scripts\/prepare-word-vectors\.mjs/.test(line),
      )
      const user = lines.findIndex((line) => line.startsWith('USER '))
      expect(copy, name).toBeGreaterThan(0)
      expect(convert, name).toBeGreaterThan(copy)
      expect(user, name).toBeGreaterThan(convert)
    }
  })

  it('runs the compiled service as a non-root user with a health check on an open route', async () => {
    const { app } = await createTestApp({
      config: { auth: { adminKey: 'x'.repeat(32) } },
    })
    for (const name of ['cpu', 'gpu']) {
      const lines = stages().get(name)!
      const text = lines.join('\n')
      expect(text, name).toMatch(/^USER (node|toolsel)$/m)
      for (const path of ['./dist', './bench/results/default/report.html', 'package.json']) {
        expect(text, `${name} copies ${path}`).toContain(path)
      }
      expect(text).toMatch(/TOOLSEL_HOST=0\.0\.0\.0/)
      const port = /TOOLSEL_PORT=(\d+)/.exec(text)![1]
      expect(text).toContain(`EXPOSE ${port}`)
      const probe = /HEALTHCHECK .*'(\/\w+)'\)/.exec(text)?.[1]
      expect(probe, name).toBe('/readyz')
      // Keys are required in the images; the probe must answer without one.
      const response = await app.request(probe!)
      expect(response.status).toBe(200)
      expect(text).toMatch(/ENTRYPOINT \["node", "bin\/toolsel\.mjs"\]/)
    }
  })
})

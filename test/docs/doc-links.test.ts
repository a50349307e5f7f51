import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const DOCS = ['README.md', 'DESIGN.md', 'docs/mcp.md', 'docs/training.md', 'bench/README.md']

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors a markdown file has: its headings' (`-1`, `-2` for repeats) and `<a id>`s. */
function anchors(text: string): Set<string> {
  const found = new Set<string>()
  const seen = new Map<string, number>()
  let fenced = false
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    if (fenced) continue
    const heading = line.match(/^#{1,6}\s+(.*)$/)?.[1]
    if (heading !== undefined) {
      const base = slug(heading)
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      found.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const match of line.matchAll(/<a id="([^"]+)"/g)) found.add(match[1])
  }
  return found
}

describe('links in the docs', () => {
  it('every relative link names a file that exists, and an anchor that file has', async () => {
    const broken: string[] = []
    let checked = 0
    for (const doc of DOCS) {
      const text = await readFile(join(ROOT, doc), 'utf8')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue
        const [path, anchor] = target.split('#')
        const file = path === '' ? join(ROOT, doc) : join(ROOT, dirname(doc), path)
        checked += 1
        if (!existsSync(file)) {
          broken.push(`${doc}: ${target} (no ${relative(ROOT, file)})`)
        } else if (anchor !== undefined && file.endsWith('.md')) {
          if (!anchors(await readFile(file, 'utf8')).has(anchor)) {
            broken.push(`${doc}: ${target} (no such heading)`)
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(20)
    expect(broken).toEqual([])
  })

  it('makes the anchors GitHub makes', () => {
    expect([
      ...anchors(
        '# A\n## Usage examples\n### Streamable HTTP\n## Learned dense space (`toolsel train --learned-dense`, round 8)\n## Usage examples\n```\n# not a heading\n```',
      ),
    ]).toEqual([
      'a',
      'usage-examples',
      'streamable-http',
      'learned-dense-space-toolsel-train---learned-dense-round-8',
      'usage-examples-1',
    ])
  })
})

describe("bench/README.md's contents", () => {
  it('lists every ## and ### heading, in order, at its level, linking to its anchor', async () => {
    const text = await readFile(join(ROOT, 'bench/README.md'), 'utf8')
    const headings: string[] = []
    const seen = new Map<string, number>()
    let fenced = false
    for (const line of text.split('\n')) {
      if (line.startsWith('```')) fenced = !fenced
      if (fenced) continue
      const match = line.match(/^(#{1,6})\s+(.*)$/)
      if (!match) continue
      const base = slug(match[2])
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      const anchor = count === 0 ? base : `${base}-${count}`
      if ((match[1] === '##' || match[1] === '###') && match[2] !== 'Contents') {
        headings.push(`${match[1] === '##' ? '' : '  '}- [${match[2]}](#${anchor})`)
      }
    }
    const section = text.split('\n## Contents\n')[1]?.split('\n## ')[0] ?? ''
    const listed = section.split('\n').filter((line) => /^\s*- \[/.test(line))
    expect(headings.length).toBeGreaterThan(30)
    // A new ## or ### section adds its line to the list under "## Contents" (as `headings` has it).
    expect(listed, 'bench/README.md "## Contents" lists every ## and ### heading').toEqual(headings)
  })
})

describe('what bench/README cites from outside the repository', () => {
  it("says of every script, note or patch under /work/coord (a round's notes, since lost) that it is lost", async () => {
    const text = await readFile(join(ROOT, 'bench/README.md'), 'utf8')
    // Paragraphs and fenced blocks: the words about a citation sit beside it.
    const blocks = text.split(/\n\s*\n/)
    const unsaid: string[] = []
    let cited = 0
    for (const block of blocks) {
      // flock's lock files (heavy-a, heavy-b) are locks, not something to run or read.
      const paths = [...block.matchAll(/\/work\/coord\/[^\s`),;:]+/g)]
        .map(([path]) => path)
        .filter((path) => !/^\/work\/coord\/heavy-[ab](\.lock)?$/.test(path))
      cited += paths.length
      if (paths.length > 0 && !/\blost\b/.test(block)) unsaid.push(paths.join(', '))
    }
    expect(cited).toBeGreaterThan(30)
    expect(unsaid).toEqual([])
  })
})

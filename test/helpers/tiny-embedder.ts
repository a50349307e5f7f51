/**
 * The tiny ONNX embedder fixture (test/fixtures/models/tiny-embedder, built by
 * scripts/build-tiny-embedder.py), and why a test that needs it skips when its weights are missing.
 * @module
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The fixture's directory. */
export const TINY_EMBEDDER = fileURLToPath(
  new URL('../fixtures/models/tiny-embedder', import.meta.url),
)

/**
 * The reason to skip (`it.skipIf`/`describe.skipIf`) when its weights are missing, else
 * undefined.
 */
export const TINY_EMBEDDER_MISSING = existsSync(join(TINY_EMBEDDER, 'onnx/model.onnx'))
  ? undefined
  : 'tiny-embedder fixture missing; run /usr/bin/python3 scripts/build-tiny-embedder.py'

/**
 * Paths of the tiny Qwen3 fixtures (built by scripts/build-tiny-qwen3.py, completed with the
 * real tokenizer by scripts/prepare-test-models.mjs) and the reason to skip when they are not
 * ready.
 * @module
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export type TinyModel =
  'tiny-qwen3-planner' | 'tiny-qwen3-thinking' | 'tiny-qwen3-garbage' | 'tiny-qwen3-selector'

const ROOT = fileURLToPath(new URL('../../fixtures/models/', import.meta.url))

export function tinyModel(name: TinyModel): string {
  return join(ROOT, name)
}

/** Undefined when every fixture has its tokenizer; otherwise why model tests skip. */
export const TINY_MODELS_MISSING: string | undefined = (
  [
    'tiny-qwen3-planner',
    'tiny-qwen3-thinking',
    'tiny-qwen3-garbage',
    'tiny-qwen3-selector',
  ] as const
).some((name) => !existsSync(join(ROOT, name, 'tokenizer.json')))
  ? 'tiny Qwen3 fixtures lack tokenizer.json: run node scripts/prepare-test-models.mjs (needs npm ci)'
  : undefined

/** The plan the planner fixtures answer. */
export const TINY_PLAN = '["get the weather forecast for Paris tomorrow", "email it to Ann"]'

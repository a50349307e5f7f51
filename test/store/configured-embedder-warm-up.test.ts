/**
 * createConfiguredEmbedder warms a new embedder up with one forward pass, so that a server's
 * first request does not pay the set-up; a use-lite load that probed the weights (one pass over
 * the probe texts, the first load of a process) is warm already and is not warmed up again, nor
 * is an onnx load (its dimension probe is a pass). Real use-lite weights and a real ONNX model
 * (test/fixtures/models/tiny-embedder); passes counted on the calling thread (`useLiteStats`,
 * `onnxStats`). Each test file
 * runs in a fresh process (vitest forks), so the first load here is the process's first.
 */
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/load-config.ts'
import { fileURLToPath } from 'node:url'
import { OnnxEmbeddingModel, onnxStats } from '../../src/models/onnx/onnx-embedding-model.ts'
import { useLiteStats } from '../../src/models/use-lite/use-lite-embedding-model.ts'
import { createConfiguredEmbedder } from '../../src/store/create-configured-embedder.ts'

const dense = (threads: number) =>
  parseConfig({ retrieve: { dense: { embedder: 'use-lite', threads } } }).retrieve.dense

describe('use-lite warm-up', () => {
  it('skips the warm-up pass after the probe pass; warms a later instance up', async () => {
    const before = useLiteStats.passes
    const first = await createConfiguredEmbedder(dense(0))
    expect(first.warmedUp).toBe(true)
    // Was 2: the probe's pass, then the warm-up's.
    expect(useLiteStats.passes - before).toBe(1)

    // Another instance (other options), the probe taken already: warmed up by a pass of its own.
    const second = await createConfiguredEmbedder(dense(1))
    expect(second).not.toBe(first)
    expect(second.warmedUp).toBe(false)
    expect(useLiteStats.passes - before).toBe(2)
    expect(second.fingerprint).toBe(first.fingerprint)
    await (second as { close?: () => Promise<void> }).close?.()

    // The same instance again: nothing more.
    expect(await createConfiguredEmbedder(dense(0))).toBe(first)
    expect(useLiteStats.passes - before).toBe(2)
  }, 120_000)

  it('skips the warm-up pass after an onnx load (its dimension probe ran one)', async () => {
    const model = fileURLToPath(new URL('../fixtures/models/tiny-embedder', import.meta.url))
    const onnx = (dtype: 'fp32' | 'q8') =>
      parseConfig({ retrieve: { dense: { embedder: `onnx:${model}`, dtype } } }).retrieve.dense
    const before = onnxStats.passes
    const embedder = await createConfiguredEmbedder(onnx('fp32'))
    expect(embedder.warmedUp).toBe(true)
    // Was 2: the dimension probe's pass, then the warm-up's.
    expect(onnxStats.passes - before).toBe(1)
    // Another instance (other weights) loads, probes, and is not warmed up either.
    const other = await createConfiguredEmbedder(onnx('q8'))
    expect(other).not.toBe(embedder)
    expect(onnxStats.passes - before).toBe(2)
    // The same instance again: nothing more; a query is one pass.
    expect(await createConfiguredEmbedder(onnx('fp32'))).toBe(embedder)
    await embedder.embed(['send an email'], { kind: 'query' })
    expect(onnxStats.passes - before).toBe(3)
    for (const loaded of [embedder, other]) await (loaded as OnnxEmbeddingModel).dispose()
  }, 60_000)
})

import { mkdtemp, mkdir, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { fingerprintStats, modelFilesFingerprint } from '../../src/models/model-fingerprint.ts'

let dir: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolsel-fingerprint-'))
  await mkdir(join(dir, 'onnx'))
  await writeFile(join(dir, 'config.json'), '{"hidden_size": 32}')
  await writeFile(join(dir, 'onnx/model.onnx'), Buffer.alloc(1 << 20, 1))
})

const FILES = ['config.json', 'tokenizer.json', 'onnx/model.onnx']

describe('modelFilesFingerprint', () => {
  it('hashes each file once per process while its size and mtime stay the same', async () => {
    const before = fingerprintStats.filesHashed
    const first = await modelFilesFingerprint(dir, FILES)
    expect(first).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(fingerprintStats.filesHashed - before).toBe(2) // tokenizer.json is absent
    expect(await modelFilesFingerprint(dir, FILES)).toBe(first)
    expect(fingerprintStats.filesHashed - before).toBe(2)
  })

  it('changes when a file is replaced by other bytes of the same size', async () => {
    const first = await modelFilesFingerprint(dir, FILES)
    const before = fingerprintStats.filesHashed
    await writeFile(join(dir, 'onnx/model.onnx'), Buffer.alloc(1 << 20, 2))
    // A copy over the file keeps its inode and moves its mtime: moved apart explicitly here, so
    // that the test does not depend on the clock's resolution.
    const later = new Date(Date.now() + 5000)
    await utimes(join(dir, 'onnx/model.onnx'), later, later)
    const second = await modelFilesFingerprint(dir, FILES)
    expect(second).not.toBe(first)
    expect(fingerprintStats.filesHashed - before).toBe(1)
  })

  it('changes when a file that was absent appears', async () => {
    const first = await modelFilesFingerprint(dir, FILES)
    await writeFile(join(dir, 'tokenizer.json'), '{}')
    expect(await modelFilesFingerprint(dir, FILES)).not.toBe(first)
  })
})

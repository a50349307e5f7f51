import { mkdtemp, mkdir, stat, utimes, writeFile } from 'node:fs/promises'
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
  it('hashes each file once per process while it stays the same', async () => {
    const before = fingerprintStats.filesHashed
    const first = await modelFilesFingerprint(dir, FILES)
    expect(first).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(fingerprintStats.filesHashed - before).toBe(2) // tokenizer.json is absent
    expect(await modelFilesFingerprint(dir, FILES)).toBe(first)
    expect(fingerprintStats.filesHashed - before).toBe(2)
  })

  it('changes when a file is rewritten with other bytes of the same size and its old mtime', async () => {
    const model = join(dir, 'onnx/model.onnx')
    const mtime = new Date('2026-01-02T03:04:05Z')
    await utimes(model, mtime, mtime)
    const first = await modelFilesFingerprint(dir, FILES)
    const before = fingerprintStats.filesHashed
    // As `cp -p` over it: the same inode, size and mtime; only the ctime moves.
    await new Promise((resolve) => setTimeout(resolve, 20))
    await writeFile(model, Buffer.alloc(1 << 20, 2))
    await utimes(model, mtime, mtime)
    expect((await stat(model)).mtimeMs).toBe(mtime.getTime())
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

import { describe, expect, it } from 'vitest'
import { halfSipHash24, HalfSipHasher } from '../../src/library/half-siphash.ts'

/**
 * The reference implementation's HalfSipHash-2-4 32-bit test vectors (`vectors_hsip32` of
 * vectors.h in github.com/veorq/SipHash, Aumasson and Bernstein): the tag of bytes 0, 1, …, n-1
 * for n = 0 … 63 under the key 00 01 02 … 07, as the 4 output bytes in hex.
 */
const VECTORS_HSIP32 = `a9359f5b 27475ab8 fa62a603 8afee704 2a6e4689 c5fab669 5863fc23 8bcf63c5
d0b8848f f806e779 94b07934 08083050 57f0872f 77e663ff d6fff87c 74fe2b97 d9b5ac84 c474645b 465b8d9b
7befe387 e34d1045 613f62b3 70f367fe e6adb8bd 27400c63 26787875 4f567b5f 3ab0e669 b0644000 ff670fb4
509e338b 5d589f1a fee72112 33753259 6a434f8c fe28b729 e75cc6ec 697e8d54 63688b0f 650b62b4 b6bc1840
5d074505 2442fd2e 7bb7863a 7705d548 d75208b1 b6d499c8 0892202e 69e12ce3 8db580e5 369764c6 016e0204
3b85f3d4 fedb66be 1e692a3a c68984c0 a5c5b940 9be9e88c 7dbc8140 7c078ec5 d4e76c73 428fcbb9 bd83997a
59ea4a74`.split(/\s+/)

const key = Buffer.from([0, 1, 2, 3, 4, 5, 6, 7])
const [k0, k1] = [key.readUInt32LE(0), key.readUInt32LE(4)]
const message = Buffer.from(Array.from({ length: 64 }, (_, at) => at))
const tag = (hash: number) => {
  const out = Buffer.alloc(4)
  out.writeUInt32LE(hash)
  return out.toString('hex')
}

describe('HalfSipHash-2-4 (round 56)', () => {
  it("gives the reference's 64 test vectors, over bytes and over a text's code units", () => {
    expect(VECTORS_HSIP32).toHaveLength(64)
    const hasher = new HalfSipHasher()
    for (let length = 0; length < 64; length += 1) {
      expect(tag(halfSipHash24(message, 0, length, k0, k1))).toBe(VECTORS_HSIP32[length])
      // The same bytes inside a longer buffer: only start … end-1 count.
      const padded = Buffer.concat([Buffer.from([9, 9, 9]), message, Buffer.from([7])])
      expect(tag(halfSipHash24(padded, 3, 3 + length, k0, k1))).toBe(VECTORS_HSIP32[length])
      // ASCII code units are their bytes.
      const text = String.fromCharCode(...message.subarray(0, length))
      expect(tag(hasher.hash(text, k0, k1))).toBe(VECTORS_HSIP32[length])
    }
  })

  it('hashes each code unit as UTF-8 writes it alone: non-ASCII ids as their UTF-8, lone surrogates apart', () => {
    const hasher = new HalfSipHasher()
    const utf8 = (text: string) => {
      const bytes = Buffer.from(text, 'utf8')
      return halfSipHash24(bytes, 0, bytes.length, 7, 11)
    }
    for (const text of ['météo.prévision', '天气.预报', 'a'.repeat(300) + 'é'])
      expect(hasher.hash(text, 7, 11)).toBe(utf8(text))
    // Lone surrogates: three bytes each, so two such texts never hash as one byte string.
    expect(hasher.hash('x\ud800', 7, 11)).not.toBe(hasher.hash('x\udbff', 7, 11))
    expect(hasher.hash('x\ud800', 7, 11)).not.toBe(utf8('x\ufffd'))
    // Another key, another hash.
    expect(hasher.hash('send_sms', 7, 11)).not.toBe(hasher.hash('send_sms', 7, 12))
  })
})

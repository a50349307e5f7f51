/**
 * The learned dense map's product (dense-map.ts, `MappedEncoder`) in WebAssembly SIMD, with the
 * same bits as the JavaScript loop: each output row is still the sum of M[row][column] · x[column]
 * over the columns in order, in doubles, but two rows share one f64x2 register (a lane per row)
 * and ten registers run side by side, so twenty rows are summed at once. The matrix is kept
 * transposed and as doubles (a float32 value is exactly a double) so that a column's entries of
 * two rows lie next to each other; a float32 times a float32 is exact in a double, so the
 * products are the JavaScript ones too, and IEEE additions do not depend on the register they
 * run in.
 *
 * No toolchain: the module's few instructions are written out below with their opcodes (the
 * WebAssembly 2.0 binary format, SIMD included) and assembled when first used. Where
 * WebAssembly or its SIMD is missing (Node 20 has both without flags) `simdMapProduct` returns
 * undefined and the caller keeps its JavaScript loop.
 * @module
 */

/** LEB128 of an unsigned 32-bit value. */
function leb(value: number): number[] {
  const out: number[] = []
  do {
    let byte = value & 0x7f
    value >>>= 7
    if (value !== 0) byte |= 0x80
    out.push(byte)
  } while (value !== 0)
  return out
}

const I32 = 0x7f
const V128 = 0x7b

// Instructions (https://webassembly.github.io/spec/core/binary/instructions.html).
const get = (local: number) => [0x20, ...leb(local)]
const set = (local: number) => [0x21, ...leb(local)]
const i32 = (value: number) => [0x41, ...leb(value)]
const I32_ADD = 0x6a
const I32_SHL = 0x74
const I32_MUL = 0x6c
const I32_GT_U = 0x4b
const I32_GE_U = 0x4f
const F64_LOAD = [0x2b, 3, 0]
const BLOCK = [0x02, 0x40]
const LOOP = [0x03, 0x40]
const END = 0x0b
const br = (depth: number) => [0x0c, depth]
const brIf = (depth: number) => [0x0d, depth]
const simd = (op: number, ...immediates: number[]) => [0xfd, ...leb(op), ...immediates]
const v128Load = (offset: number) => simd(0x00, 3, ...leb(offset))
const v128Store = (offset: number) => simd(0x0b, 3, ...leb(offset))
const V128_ZERO = simd(0x0c, ...new Array<number>(16).fill(0))
const F64X2_SPLAT = simd(0x14)
const F64X2_ADD = simd(0xf0)
const F64X2_MUL = simd(0xf2)

/** Registers (f64x2, two rows each) summed side by side: 20 rows per pass over the columns. */
const LANES = 10

/**
 * `product(t, x, out, size)`: out[row] = Σ_column t[column·size + row] · x[column] for every row,
 * the columns in order; t, x and out are byte offsets of doubles; `size` must be even.
 * Locals: 0 t, 1 x, 2 out, 3 size (params), 4 row, 5 column, 6 at (t's entry), 7 stride
 * (size · 8), 8 xs (x[column] twice), 9… the sums.
 */
function productBody(): number[] {
  const [T, X, OUT, SIZE, ROW, COLUMN, AT, STRIDE, XS, SUM] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
  /** One pass over the columns with `lanes` registers (2 · lanes rows from ROW), then ROW += 2 · lanes. */
  const pass = (lanes: number) => [
    ...BLOCK,
    ...LOOP,
    // while row + 2·lanes <= size
    ...get(ROW),
    ...i32(2 * lanes),
    I32_ADD,
    ...get(SIZE),
    I32_GT_U,
    ...brIf(1),
    ...Array.from({ length: lanes }, (_, lane) => [...V128_ZERO, ...set(SUM + lane)]).flat(),
    // at = t + row · 8; column = 0
    ...get(T),
    ...get(ROW),
    ...i32(3),
    I32_SHL,
    I32_ADD,
    ...set(AT),
    ...i32(0),
    ...set(COLUMN),
    ...BLOCK,
    ...LOOP,
    ...get(COLUMN),
    ...get(SIZE),
    I32_GE_U,
    ...brIf(1),
    // xs = splat(x[column])
    ...get(X),
    ...get(COLUMN),
    ...i32(3),
    I32_SHL,
    I32_ADD,
    ...F64_LOAD,
    ...F64X2_SPLAT,
    ...set(XS),
    // sum[lane] += t[at + 16·lane] · xs, each lane in order
    ...Array.from({ length: lanes }, (_, lane) => [
      ...get(SUM + lane),
      ...get(AT),
      ...v128Load(16 * lane),
      ...get(XS),
      ...F64X2_MUL,
      ...F64X2_ADD,
      ...set(SUM + lane),
    ]).flat(),
    ...get(AT),
    ...get(STRIDE),
    I32_ADD,
    ...set(AT),
    ...get(COLUMN),
    ...i32(1),
    I32_ADD,
    ...set(COLUMN),
    ...br(0),
    END,
    END,
    // out[row + 2·lane …] = sum[lane]
    ...Array.from({ length: lanes }, (_, lane) => [
      ...get(OUT),
      ...get(ROW),
      ...i32(3),
      I32_SHL,
      I32_ADD,
      ...get(SUM + lane),
      ...v128Store(16 * lane),
    ]).flat(),
    ...get(ROW),
    ...i32(2 * lanes),
    I32_ADD,
    ...set(ROW),
    ...br(0),
    END,
    END,
  ]
  const body = [
    // locals: 4 i32 (row, column, at, stride), 1 + LANES v128
    2,
    4,
    I32,
    ...leb(1 + LANES),
    V128,
    ...get(SIZE),
    ...i32(8),
    I32_MUL,
    ...set(STRIDE),
    ...pass(LANES),
    // the rows left: two at a time
    ...pass(1),
    END,
  ]
  return [...leb(body.length), ...body]
}

function section(id: number, content: number[]): number[] {
  return [id, ...leb(content.length), ...content]
}

const name = (text: string) => [...leb(text.length), ...Array.from(text, (c) => c.charCodeAt(0))]

/** The module: imports env.memory, exports `product`. */
function moduleBytes(): Uint8Array<ArrayBuffer> {
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    // type 0: (i32 i32 i32 i32) -> ()
    ...section(1, [1, 0x60, 4, I32, I32, I32, I32, 0]),
    // import env.memory (min 1 page)
    ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 1]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('product'), 0x00, 0]),
    ...section(10, [1, ...productBody()]),
  ])
}

let compiled: WebAssembly.Module | null | undefined

/** The compiled module, or null where WebAssembly SIMD is missing. */
function simdModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled
  try {
    const bytes = moduleBytes()
    compiled = WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null
  } catch {
    compiled = null
  }
  return compiled
}

/**
 * `matrix` (size × size, row-major) as a product in WebAssembly SIMD: `(input, out)` sets
 * out[row] = Σ_column matrix[row·size + column] · input[column] (each row's sum over the columns
 * in order, in doubles, then stored in `out`), the same bits as dense-map.ts's loop. Undefined
 * where WebAssembly SIMD is missing or `size` is odd.
 */
export function simdMapProduct(
  matrix: Float32Array,
  size: number,
): ((input: Float32Array, out: Float32Array) => void) | undefined {
  const module = size % 2 === 0 && size > 0 ? simdModule() : null
  if (module === null) return undefined
  const bytes = (size * size + 2 * size) * 8
  const memory = new WebAssembly.Memory({ initial: Math.ceil(bytes / 65_536) })
  const instance = new WebAssembly.Instance(module, { env: { memory } })
  const product = instance.exports.product as (t: number, x: number, out: number, n: number) => void
  const transposed = new Float64Array(memory.buffer, 0, size * size)
  for (let row = 0; row < size; row++)
    for (let column = 0; column < size; column++)
      transposed[column * size + row] = matrix[row * size + column]
  const xAt = size * size * 8
  const outAt = xAt + size * 8
  const x = new Float64Array(memory.buffer, xAt, size)
  const sums = new Float64Array(memory.buffer, outAt, size)
  return (input, out) => {
    x.set(input)
    product(0, xAt, outAt, size)
    out.set(sums)
  }
}

/** Seeded random unit vectors for index tests (a linear congruential generator + Box-Muller). */
export function randomUnitVectors(count: number, dimensions: number, seed = 1): Float32Array[] {
  let state = seed >>> 0
  const uniform = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return (state + 1) / 2 ** 32
  }
  const gaussian = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())
  return Array.from({ length: count }, () => {
    const vector = Float32Array.from({ length: dimensions }, gaussian)
    const length = Math.hypot(...vector)
    return vector.map((value) => value / length)
  })
}

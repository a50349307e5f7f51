/**
 * Waiting on a promise for a bounded time: the gateway's closes wait on processes and closes
 * that may never end.
 * @module
 */

/**
 * `'settled'` when `promise` settles (resolves or rejects) within `ms`, else `'late'`; at once
 * when `ms` <= 0 and it has not. The timer is cleared either way, so it holds no process open.
 */
export async function settledBy(
  promise: Promise<unknown>,
  ms: number,
): Promise<'settled' | 'late'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>(
    (resolve) => (timer = setTimeout(resolve, Math.max(0, ms), 'late')),
  )
  const settled = promise.then(
    () => 'settled' as const,
    () => 'settled' as const,
  )
  const first = await Promise.race([settled, late])
  clearTimeout(timer)
  return first
}

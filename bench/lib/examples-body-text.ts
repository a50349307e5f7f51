/**
 * A POST /v1/libraries/:library/examples body of about `bytes` bytes: one example, an
 * instruction of `repeat` × "send the weekly report ", repeated until the body holds `bytes`.
 * What the side-by-side examples-body scripts (examples-body-reuse.ts, kept-worker-rss.ts) check
 * on a worker thread.
 * @module
 */
export function examplesBodyText(bytes: number, repeat: number): string {
  const example = JSON.stringify({
    instruction: 'send the weekly report '.repeat(repeat),
    tools: ['t'],
  })
  const count = Math.ceil(bytes / (example.length + 1))
  return `{"examples":[${Array.from({ length: count }, () => example).join(',')}]}`
}

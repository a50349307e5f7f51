/**
 * Reading a server's `.cpuprofile` (V8's sampling profiler, `node --cpu-prof`) by request stage:
 * shared by bench/request-profile.ts and bench/size-profile.ts.
 * @module
 */

export interface CallFrame {
  functionName: string
  url: string
  lineNumber?: number
  columnNumber?: number
}

export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame; children?: number[] }>
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/** Stages, most specific first: a sample goes to the first one its innermost matching frame fits. */
export const STAGES: Array<[string, (frame: CallFrame) => boolean]> = [
  ['BM25 search (postings)', ({ url }) => /bm25-search|top-k/.test(url)],
  ['tokenising queries', ({ url }) => /tokenize|query-expansion|segment-words|porter2/.test(url)],
  ['rule planner', ({ url }) => /\/plan\//.test(url)],
  ['learned features and model', ({ url }) => /\/learn\/|learned-selector/.test(url)],
  ['candidate lookup', ({ url }) => /tool-memo|tool-library/.test(url)],
  [
    'pipeline and service (rest)',
    ({ url }) => /pipeline\.|toolsel-service|resolve-request|components\./.test(url),
  ],
  [
    'response JSON',
    ({ functionName, url }) =>
      (functionName === 'json' && /hono.*context/.test(url)) || /server\/select-response/.test(url),
  ],
  ['socket writes', ({ functionName }) => /^writev/.test(functionName)],
  ['request validation (zod)', ({ url }) => /zod|validator|server\/validate/.test(url)],
  [
    'middleware (log, metrics, auth, host, timeout, limits)',
    ({ url }) =>
      /server\/middleware|server\/auth|server\/metrics|prom-client|abort_controller|server\/app\./.test(
        url,
      ),
  ],
  ['garbage collection', ({ functionName }) => functionName === '(garbage collector)'],
]
export const REST = 'HTTP server, hono (rest)'

/**
 * Each stage's time in the profile from `fromMicros` on (the profile's clock), a sample counting
 * the time to the next one, at most `maxDeltaMicros` (a long gap is a process not running: a
 * shutdown, a stop).
 */
export function stageShares(
  profile: CpuProfile,
  fromMicros: number,
  maxDeltaMicros = Infinity,
): Map<string, number> {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id)
  const stageOf = new Map<number, string>()
  const stage = (id: number): string => {
    let found = stageOf.get(id)
    if (found === undefined) {
      const frame = nodes.get(id)!.callFrame
      const match = STAGES.find(([, test]) => test(frame))
      const up = parent.get(id)
      found = match ? match[0] : up === undefined ? REST : stage(up)
      stageOf.set(id, found)
    }
    return found
  }
  const totals = new Map<string, number>()
  let time = profile.startTime
  for (let at = 0; at < profile.samples.length; at += 1) {
    time += profile.timeDeltas[at]
    const id = profile.samples[at]
    if (time < fromMicros || nodes.get(id)!.callFrame.functionName === '(idle)') continue
    const micros = Math.min(profile.timeDeltas[at + 1] ?? 0, maxDeltaMicros)
    const name = stage(id)
    totals.set(name, (totals.get(name) ?? 0) + micros)
  }
  return totals
}

/** Self time of each function (name, file, line) in the window, most first. */
export function selfTimes(
  profile: CpuProfile,
  fromMicros: number,
  maxDeltaMicros = Infinity,
): Array<[string, number]> {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]))
  const totals = new Map<string, number>()
  let time = profile.startTime
  for (let at = 0; at < profile.samples.length; at += 1) {
    time += profile.timeDeltas[at]
    const frame = frames.get(profile.samples[at])!
    if (time < fromMicros || frame.functionName === '(idle)') continue
    const file = frame.url.slice(frame.url.lastIndexOf('/') + 1)
    const key = `${frame.functionName || '(anonymous)'} ${file}:${(frame.lineNumber ?? 0) + 1}`
    const micros = Math.min(profile.timeDeltas[at + 1] ?? 0, maxDeltaMicros)
    totals.set(key, (totals.get(key) ?? 0) + micros)
  }
  return [...totals].sort((a, b) => b[1] - a[1])
}

import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTimeSlicer, runStepsSliced, type Steps } from '../src/time-slicer.ts'

/** Until the loop has turned twice: any slice a test before opened is closed. */
const turns = async () => {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve))
}

/** A clock the steps move, so nothing here depends on the machine's speed. */
function fakeClock() {
  let now = 1_000
  vi.spyOn(performance, 'now').mockImplementation(() => now)
  return { advance: (ms: number) => (now += ms) }
}

/** A turn with no slice open, the fake clock, and whether the loop has turned since. */
async function freshTurn() {
  await turns()
  const clock = fakeClock()
  let turned = false
  setImmediate(() => (turned = true))
  return { clock, turned: () => turned }
}

/** Steps that each take `ms` on the clock and record whether the loop turned before them. */
function* timed(
  count: number,
  ms: number,
  clock: { advance(ms: number): void },
  seen: boolean[],
  turned: () => boolean,
): Steps<number> {
  for (let at = 0; at < count; at++) {
    seen.push(turned())
    clock.advance(ms)
    yield
  }
  return count
}

describe('time slicing shared by the stages of one turn', () => {
  afterEach(() => vi.restoreAllMocks())

  it('counts an earlier stage of the same turn against a later stage first slice (fails before perf17: each stage had a fresh 10 ms)', async () => {
    const { clock, turned } = await freshTurn()
    // Stage one: one step of 8 ms, done before its slice ends, so it never yields.
    const first: boolean[] = []
    expect(await runStepsSliced(timed(1, 8, clock, first, turned))).toBe(1)
    // Stage two, chained by await in the same turn: 8 + 4 ms is past the 10 ms slice after its
    // first step, so it yields before its second.
    const second: boolean[] = []
    expect(await runStepsSliced(timed(3, 4, clock, second, turned))).toBe(3)
    expect(first).toEqual([false])
    expect(second).toEqual([false, true, true])
  })

  it('gives a stage resumed after its yield a fresh slice, and a slicer the same turn budget (fails before perf17)', async () => {
    await turns()
    const clock = fakeClock()
    let turns_ = 0
    const counting = () => {
      setImmediate(() => {
        turns_++
        if (turns_ < 10) counting()
      })
    }
    counting()
    // Steps of 3 ms with a 10 ms slice: 4 steps a slice (3, 6, 9, 12 ms); the resumed slice is a
    // fresh one: 2 steps (6 ms) and 5 ms of work before the end, done without a yield.
    const seen: number[] = []
    function* steps(): Steps<void> {
      for (let at = 0; at < 6; at++) {
        seen.push(turns_)
        clock.advance(3)
        yield
      }
      clock.advance(5)
    }
    await runStepsSliced(steps())
    expect(seen).toEqual([0, 0, 0, 0, 1, 1])
    // createTimeSlicer in the turn that stage ended in: its 11 ms are past the slice already.
    const slicer = createTimeSlicer()
    const before = turns_
    await slicer.next()
    expect(turns_).toBeGreaterThan(before)
  })

  it('starts a fresh slice in a turn where no sliced work ran yet', async () => {
    const { clock, turned } = await freshTurn()
    const seen: boolean[] = []
    await runStepsSliced(timed(3, 3, clock, seen, turned))
    expect(seen).toEqual([false, false, false])
  })
})

/**
 * The loop iterations, counted by an immediate that runs first in every check phase (armed before
 * any sliced work, it arms itself again first), until `stop`.
 */
function iterations() {
  let at = 0
  let stopped = false
  const tick = () => {
    if (stopped) return
    at++
    setImmediate(tick)
  }
  setImmediate(tick)
  return { now: () => at, stop: () => (stopped = true) }
}

/** `count` steps of `ms` on the clock, each logged as `name@iteration`. */
function* logged(
  name: string,
  count: number,
  ms: number,
  clock: { advance(ms: number): void },
  log: string[],
  iteration: () => number,
  onStep: (at: number) => void = () => {},
): Steps<string> {
  for (let at = 0; at < count; at++) {
    log.push(`${name}@${iteration()}`)
    onStep(at)
    clock.advance(ms)
    yield
  }
  return name
}

describe('one slice a loop iteration for the resumed slicers, first come first resumed', () => {
  afterEach(() => vi.restoreAllMocks())

  it('resumes the waiting slicers of one check phase in one slice in all, in turn (fails before perf19: each resumed slicer had a fresh 10 ms, so N of them held a check phase N slices)', async () => {
    await turns()
    const loop = iterations()
    const clock = fakeClock()
    const log: string[] = []
    // Three requests' work of 6 steps of 4 ms (a 10 ms slice: 3 steps), started in one turn.
    const runs = ['a', 'b', 'c'].map((name) =>
      runStepsSliced(logged(name, 6, 4, clock, log, loop.now)),
    )
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'c'])
    loop.stop()
    const byIteration = new Map<string, string[]>()
    for (const entry of log) {
      const at = entry.split('@')[1]
      byIteration.set(at, [...(byIteration.get(at) ?? []), entry])
    }
    const steps = [...byIteration].map(([at, entries]) => `${at}: ${entries.join(' ')}`)
    expect(steps).toEqual([
      // The turn that started them shares one slice (perf17): a's 3 steps, then one each.
      '0: a@0 a@0 a@0 b@0 c@0',
      // Each check phase: one slice; a, b, c in turn, first come first resumed.
      '1: a@1 a@1 a@1',
      '2: b@2 b@2 b@2',
      '3: c@3 c@3 c@3',
      // a ends at once (no step left), b's last 2 steps leave 2 ms: c is resumed for one step.
      '4: b@4 b@4 c@4',
      '5: c@5',
    ])
  })

  it('rejects a waiting slicer aborted while others are ahead of it in the next iteration, and the rest go on in order', async () => {
    await turns()
    const loop = iterations()
    const clock = fakeClock()
    const log: string[] = []
    const controller = new AbortController()
    let rejectedAt: number | undefined
    // c is aborted during a's second slice (iteration 1), while b waits ahead of c.
    const abortC = (at: number) => {
      if (at === 4) controller.abort(new Error('client went away'))
    }
    const a = runStepsSliced(logged('a', 9, 4, clock, log, loop.now, abortC))
    const b = runStepsSliced(logged('b', 6, 4, clock, log, loop.now))
    const c = runStepsSliced(logged('c', 6, 4, clock, log, loop.now), controller.signal).catch(
      (error: unknown) => {
        rejectedAt = loop.now()
        return error
      },
    )
    expect(await Promise.all([a, b])).toEqual(['a', 'b'])
    const error = await c
    loop.stop()
    expect(error).toMatchObject({ code: 'ABORTED' })
    // Rejected as the next check phase opened (2), not after b's turn there.
    expect(rejectedAt).toBe(2)
    expect(log.filter((entry) => entry.startsWith('c'))).toEqual(['c@0'])
    expect(log).toEqual([
      ...['a@0', 'a@0', 'a@0', 'b@0', 'c@0'],
      ...['a@1', 'a@1', 'a@1'],
      ...['b@2', 'b@2', 'b@2'],
      ...['a@3', 'a@3', 'a@3'],
      ...['b@4', 'b@4'],
    ])
    // The queue is left as it should be: a later slicer yields and resumes as usual.
    const later: string[] = []
    expect(await runStepsSliced(logged('d', 4, 4, clock, later, loop.now))).toBe('d')
  })

  it('lets createTimeSlicer wait in the same queue as runStepsSliced', async () => {
    await turns()
    const loop = iterations()
    const clock = fakeClock()
    const log: string[] = []
    const sliced = async () => {
      const slicer = createTimeSlicer()
      for (let at = 0; at < 6; at++) {
        await slicer.next()
        log.push(`s@${loop.now()}`)
        clock.advance(4)
      }
    }
    const steps = runStepsSliced(logged('r', 6, 4, clock, log, loop.now))
    await Promise.all([sliced(), steps])
    loop.stop()
    // r's 3 steps spend the turn's slice, so s (which checks before an item) waits behind r from
    // its first item; they take the check phases in turn, and r ends at once in the fourth.
    expect(log.join(' ')).toBe('r@0 r@0 r@0 r@1 r@1 r@1 s@2 s@2 s@2 s@3 s@3 s@3')
  })
})

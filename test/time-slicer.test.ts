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

import { describe, expect, it } from 'vitest'
import { ToolselError, throwIfAborted } from '../src/errors.ts'
import { LazyAbort, lazySignal, retrieveOptions, signalOf } from '../src/lazy-abort.ts'

describe('LazyAbort', () => {
  it('makes one AbortSignal on first read, which a later abort fires with the reason', () => {
    const abort = new LazyAbort()
    const signal = abort.signal
    expect(abort.signal).toBe(signal)
    let fired: unknown
    signal.addEventListener('abort', () => (fired = signal.reason))
    const reason = new ToolselError('TIMEOUT', 'late')
    abort.abort(reason)
    expect([abort.aborted, signal.aborted, fired, abort.reason]).toEqual([
      true,
      true,
      reason,
      reason,
    ])
  })

  it('hands a signal read after the abort out already aborted, with the first reason', () => {
    const abort = new LazyAbort()
    const first = new ToolselError('ABORTED', 'client left')
    abort.abort(first)
    abort.abort(new ToolselError('TIMEOUT', 'ignored: the abort already happened'))
    expect(abort.signal.aborted).toBe(true)
    expect(abort.signal.reason).toBe(first)
    expect(() => throwIfAborted(abort)).toThrow(first)
  })

  it('throwIfAborted reads the state without making a signal; signalOf and lazySignal make it on demand', () => {
    const abort = new LazyAbort()
    const made = new AbortController().signal
    expect(() => throwIfAborted(abort)).not.toThrow()
    expect(signalOf(made)).toBe(made)
    expect(signalOf(undefined)).toBeUndefined()
    const options = Object.assign(lazySignal(abort), { k: 3 })
    expect(options.k).toBe(3)
    expect(options.signal).toBe(abort.signal)
    expect(lazySignal(made).signal).toBe(made)
  })

  it('retrieveOptions gives a synchronous retriever its options alone, a waiting one a lazy signal', () => {
    const abort = new LazyAbort()
    const options = { k: 5, minScore: 3 }
    const synchronous = retrieveOptions(true, abort, options)
    expect(synchronous).toBe(options)
    expect('signal' in synchronous).toBe(false)
    const waiting = retrieveOptions(false, abort, options)
    expect([waiting.k, waiting.minScore]).toEqual([5, 3])
    expect(waiting.signal).toBe(abort.signal)
    expect(retrieveOptions(undefined, undefined, options).signal).toBeUndefined()
  })
})

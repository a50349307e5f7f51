/**
 * The shared suite every `Retriever` implementation runs (hono's `common.case.test.ts` pattern):
 * each implementation's test file calls `runRetrieverContract` with a factory.
 * @module
 */
import { describe, expect, it } from 'vitest'
import { isToolselError } from '../../src/errors.ts'
import { EMPTY_PARAMETERS, type Tool } from '../../src/library/tool.ts'
import type { Candidate, Retriever } from '../../src/contracts.ts'

export interface RetrieverContractOptions {
  /** Suite title, e.g. `DenseRetriever (flat, hashing:256)`. */
  name: string
  /** Builds the retriever over `tools`. Called more than once (determinism across instances). */
  create: (tools: Tool[]) => Promise<Retriever>
  /** When set, the suite is skipped and this reason is shown. */
  skip?: string
  /**
   * `minScore` thresholds one of its inputs rather than its own scores (a library's hybrid: a
   * request's tau is BM25's). Then a threshold may only drop candidates, never add any.
   */
  minScoreOnInput?: boolean
}

function tool(id: string, description: string, parameters: Record<string, string> = {}): Tool {
  const properties = Object.fromEntries(
    Object.entries(parameters).map(([name, text]) => [name, { type: 'string', description: text }]),
  )
  return {
    id,
    name: id.split('.').at(-1) ?? id,
    description,
    parameters:
      Object.keys(properties).length > 0 ? { type: 'object', properties } : EMPTY_PARAMETERS,
    namespace: id.split('.')[0],
  }
}

/** A small library with distinct capabilities; ids are `namespace.name`. */
export const CONTRACT_TOOLS: readonly Tool[] = [
  tool('weather.get_forecast', 'Get the weather forecast for a city for the next days', {
    city: 'Name of the city',
  }),
  tool('weather.get_air_quality', 'Get the air quality index and pollution level at a location'),
  tool('messaging.send_sms', 'Send an SMS text message to a phone number', {
    phone: 'Phone number',
    text: 'Message text',
  }),
  tool('messaging.send_email', 'Send an email with a subject and body to an address', {
    to: 'Email address',
  }),
  tool('calendar.create_event', 'Create a calendar event with a title, date and time'),
  tool('calendar.list_events', 'List upcoming meetings in the calendar for a week'),
  tool('finance.stock_price', 'Look up the latest stock price of a company by ticker symbol', {
    symbol: 'Ticker symbol',
  }),
  tool('finance.convert_currency', 'Convert an amount of money from one currency to another'),
  tool('travel.search_flights', 'Search airline flights between two airports on a date'),
  tool('travel.book_hotel', 'Book a hotel room in a city for a range of dates'),
  tool('maps.get_directions', 'Get driving directions and distance between two addresses'),
  tool('maps.nearby_restaurants', 'Find restaurants near a location with ratings and reviews'),
  tool('music.play_song', 'Play a song by an artist on the music player'),
  tool('music.lyrics', 'Fetch the lyrics of a song'),
  tool('news.top_headlines', 'Get the latest news headlines for a country and category'),
  tool('files.upload', 'Upload a file to cloud storage and return a share link'),
  tool('files.delete', 'Delete a file from the drive'),
  tool('translate.text', 'Translate text from one language to another language'),
  tool('math.calculator', 'Evaluate a math expression and return the number'),
  tool('sports.live_scores', 'Get live scores of football and basketball matches'),
  tool('shopping.track_order', 'Track the shipping status of an online order'),
  tool('recipes.search', 'Search cooking recipes by ingredient and diet'),
  tool('jokes.random', 'Tell a random joke'),
  tool('empty.no_description', ''),
]

/** Queries that restate one tool's description, with that tool's id. */
const RESTATED: ReadonlyArray<[string, string]> = [
  ['get the weather forecast for a city for the next days', 'weather.get_forecast'],
  ['send an sms text message to a phone number', 'messaging.send_sms'],
  ['look up the latest stock price of a company by ticker symbol', 'finance.stock_price'],
  ['search airline flights between two airports on a date', 'travel.search_flights'],
  ['translate text from one language to another language', 'translate.text'],
  ['fetch the lyrics of a song', 'music.lyrics'],
]

const IDS = new Set(CONTRACT_TOOLS.map((entry) => entry.id))

function expectSorted(candidates: readonly Candidate[]): void {
  for (let index = 1; index < candidates.length; index++) {
    const previous = candidates[index - 1]
    const current = candidates[index]
    expect(previous.score).toBeGreaterThanOrEqual(current.score)
    if (previous.score === current.score) expect(previous.id < current.id).toBe(true)
  }
}

function expectValid(candidates: readonly Candidate[]): void {
  for (const candidate of candidates) {
    expect(IDS.has(candidate.id), `unknown id ${candidate.id}`).toBe(true)
    expect(Number.isFinite(candidate.score), `score of ${candidate.id}`).toBe(true)
  }
  expect(new Set(candidates.map((candidate) => candidate.id)).size).toBe(candidates.length)
  expectSorted(candidates)
}

export function runRetrieverContract(options: RetrieverContractOptions): void {
  describe.skipIf(options.skip !== undefined)(
    `Retriever contract: ${options.name}${options.skip ? ` (skipped: ${options.skip})` : ''}`,
    () => {
      const tools = () => CONTRACT_TOOLS.map((entry) => ({ ...entry }))

      it('has a non-empty name', async () => {
        const retriever = await options.create(tools())
        expect(retriever.name.length).toBeGreaterThan(0)
      })

      it('returns at most k candidates, sorted by score then id, with ids from the library', async () => {
        const retriever = await options.create(tools())
        for (const k of [1, 3, 10, 100]) {
          const candidates = await retriever.retrieve('send a message about the weather', { k })
          expect(candidates.length).toBeLessThanOrEqual(k)
          expectValid(candidates)
        }
      })

      // The query is text to BM25 and dense, and an alternation to a pattern retriever (regex).
      it('keeps only candidates scoring at least minScore', async () => {
        const retriever = await options.create(tools())
        const all = await retriever.retrieve('weather forecast|air quality|city', {
          k: 10,
        })
        expect(all.length).toBeGreaterThan(1)
        const minScore = all[Math.floor(all.length / 2)].score
        const kept = await retriever.retrieve('weather forecast|air quality|city', {
          k: 10,
          minScore,
        })
        expect(kept.length).toBeGreaterThan(0)
        if (options.minScoreOnInput) {
          const unthresholded = new Set(all.map((candidate) => candidate.id))
          for (const candidate of kept) expect(unthresholded.has(candidate.id)).toBe(true)
          expect(kept.length).toBeLessThanOrEqual(all.length)
          return
        }
        for (const candidate of kept) expect(candidate.score).toBeGreaterThanOrEqual(minScore)
      })

      it('is deterministic within and across instances', async () => {
        const query = 'book a hotel and find flights'
        const first = await (await options.create(tools())).retrieve(query, { k: 5 })
        const retriever = await options.create(tools())
        expect(await retriever.retrieve(query, { k: 5 })).toEqual(first)
        expect(await retriever.retrieve(query, { k: 5 })).toEqual(first)
      })

      it('ranks first the tool whose description the query restates', async () => {
        const retriever = await options.create(tools())
        for (const [query, id] of RESTATED) {
          const [top] = await retriever.retrieve(query, { k: 5 })
          expect(top?.id, query).toBe(id)
        }
      })

      it('answers an empty or stop-word query with [] or valid candidates', async () => {
        const retriever = await options.create(tools())
        for (const query of ['', '   ', 'the of and a to']) {
          expectValid(await retriever.retrieve(query, { k: 5 }))
        }
      })

      it('rejects with ABORTED when the signal has fired', async () => {
        const retriever = await options.create(tools())
        const controller = new AbortController()
        controller.abort()
        const error = await retriever
          .retrieve('weather', { k: 5, signal: controller.signal })
          .catch((caught: unknown) => caught)
        expect(isToolselError(error, 'ABORTED'), String(error)).toBe(true)
      })
    },
  )
}

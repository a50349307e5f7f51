/** A small hand-written tool set for unit tests (the demo library is bigger and lives in src/). */
import type { Tool } from '../../src/library/tool.ts'

const schema = (
  properties: Record<string, { type: string; description: string }>,
  required: string[] = [],
) => ({
  type: 'object',
  properties,
  required,
})

export const SAMPLE_TOOLS: Tool[] = [
  {
    id: 'weather.get_forecast',
    name: 'get_forecast',
    namespace: 'weather',
    description: 'Get the daily weather forecast for a city for the next days.',
    parameters: schema(
      {
        city: { type: 'string', description: 'City name' },
        days: { type: 'integer', description: 'Number of days' },
      },
      ['city'],
    ),
  },
  {
    id: 'weather.get_current_weather',
    name: 'get_current_weather',
    namespace: 'weather',
    description: 'Get the current weather conditions (temperature, wind) at a location right now.',
    parameters: schema({ location: { type: 'string', description: 'City or coordinates' } }, [
      'location',
    ]),
  },
  {
    id: 'mail.send_email',
    name: 'send_email',
    namespace: 'mail',
    description: 'Send an email message to one or more recipients.',
    parameters: schema(
      {
        to: { type: 'string', description: 'Recipient email address' },
        subject: { type: 'string', description: 'Subject line' },
        body: { type: 'string', description: 'Message body' },
      },
      ['to', 'body'],
    ),
  },
  {
    id: 'mail.search_inbox',
    name: 'search_inbox',
    namespace: 'mail',
    description: 'Search received emails in the inbox by sender, subject or text.',
    parameters: schema({ query: { type: 'string', description: 'Search text' } }, ['query']),
  },
  {
    id: 'sms.send_sms',
    name: 'send_sms',
    namespace: 'sms',
    description: 'Send an SMS text message to a phone number.',
    parameters: schema(
      {
        phone: { type: 'string', description: 'Phone number' },
        text: { type: 'string', description: 'Message text' },
      },
      ['phone', 'text'],
    ),
  },
  {
    id: 'travel.search_flights',
    name: 'search_flights',
    namespace: 'travel',
    description: 'Search flights between two airports on a date.',
    parameters: schema(
      {
        origin: { type: 'string', description: 'Departure airport' },
        destination: { type: 'string', description: 'Arrival airport' },
        date: { type: 'string', description: 'Departure date' },
      },
      ['origin', 'destination', 'date'],
    ),
  },
  {
    id: 'travel.book_hotel',
    name: 'book_hotel',
    namespace: 'travel',
    description: 'Book a hotel room in a city for given check-in and check-out dates.',
    parameters: schema(
      {
        city: { type: 'string', description: 'City' },
        checkIn: { type: 'string', description: 'Check-in date' },
      },
      ['city', 'checkIn'],
    ),
  },
  {
    id: 'finance.get_stock_quote',
    name: 'getStockQuote',
    namespace: 'finance',
    description: 'Get the latest stock price quote for a ticker symbol.',
    parameters: schema({ symbol: { type: 'string', description: 'Ticker symbol such as AAPL' } }, [
      'symbol',
    ]),
  },
]

const SAMPLE_BY_ID = new Map(SAMPLE_TOOLS.map((tool) => [tool.id, tool]))

/** The sample tool with this id (a test's `tool(id)` lookup; undefined ids are a test bug). */
export const sampleTool = (id: string): Tool => SAMPLE_BY_ID.get(id)!

/**
 * Usage examples of the sample tools that give a saved index an expansion index
 * (`bm25-examples.bin`): two for one tool, one for another.
 */
export const SAMPLE_EXAMPLES = [
  { instruction: 'holler at the crew about the gig', tools: ['sms.send_sms'] },
  { instruction: 'holler at my bandmates', tools: ['sms.send_sms'] },
  { instruction: 'shoot Ann a note with the numbers', tools: ['mail.send_email'] },
]

/** One tool in OpenAI's function format (what `toolsel index` and a library PUT take), for the CLI's tests. */
export const SMS_FUNCTION_TOOL = {
  type: 'function',
  function: {
    name: 'send_sms',
    description: 'Send an SMS text message to a phone number',
    parameters: { type: 'object', properties: { to: { type: 'string' } } },
  },
}

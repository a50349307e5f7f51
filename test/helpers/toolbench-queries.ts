/** A small ToolBench queries file (`--suite toolbench-g1 --queries <file>`) for bench runs in tests. */

const API = (tool: string, api: string, description: string) => ({
  category_name: 'Test',
  tool_name: tool,
  api_name: api,
  api_description: description,
  required_parameters: [],
  optional_parameters: [],
  method: 'GET',
})

/** Six APIs (weather, mail, flights, hotels, stocks, music): every query's api_list. */
export const TOOLBENCH_APIS = [
  API('Weather', 'forecast', 'Get the weather forecast for a city'),
  API('Mail', 'send email', 'Send an email message to a recipient'),
  API('Flights', 'search flights', 'Search flights between two airports'),
  API('Hotels', 'book hotel', 'Book a hotel room in a city'),
  API('Stocks', 'stock quote', 'Get the latest stock price for a ticker'),
  API('Music', 'play song', 'Play a song by title or artist'),
]

/** ToolBench query records, one per [query, tool, api] (the relevant API), ids from 1. */
export function toolbenchQueries(rows: ReadonlyArray<readonly [string, string, string]>) {
  return rows.map(([query, tool, api], index) => ({
    query_id: index + 1,
    query,
    api_list: TOOLBENCH_APIS,
    'relevant APIs': [[tool, api]],
  }))
}

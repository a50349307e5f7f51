/** The parts of autocannon's API bench/perf.ts and scripts/soak.ts use (the package ships no types). */
declare module 'autocannon' {
  namespace autocannon {
    interface Request {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string
    }
    interface Options {
      url: string
      connections?: number
      duration?: number
      /** Seconds a request may wait for its answer before it counts as a timeout (default 10). */
      timeout?: number
      method?: 'GET' | 'POST' | 'PUT' | 'DELETE'
      headers?: Record<string, string>
      body?: string
      requests?: Array<Request & { setupRequest?: (request: Request) => Request }>
    }
    interface Histogram {
      average: number
      p50: number
      p99: number
      total: number
    }
    interface Result {
      latency: Histogram
      requests: Histogram
      errors: number
      timeouts: number
      non2xx: number
      /** Answers per HTTP status, `{"200": {count}, "503": {count}}`. */
      statusCodeStats?: Record<string, { count: number }>
    }
  }
  function autocannon(
    options: autocannon.Options,
    callback: (error: Error | null, result: autocannon.Result) => void,
  ): void
  export default autocannon
}

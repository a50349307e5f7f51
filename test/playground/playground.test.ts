/// <reference lib="dom" />
/**
 * The playground page in a real headless Chromium against a real `toolsel serve`: a selection
 * is run from the page as a user would, and a screenshot of the result is saved to
 * test/output/playground.png. Skipped, visibly, where no Chromium is installed (Debian:
 * `apt-get install chromium`; or set CHROME_PATH).
 */
import { existsSync } from 'node:fs'
import { mkdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import puppeteer, { type Browser } from 'puppeteer-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, startServe, type RunningServe } from '../helpers/start-serve.ts'

const BROWSER = [
  process.env.CHROME_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
].find((path) => path !== undefined && path !== '' && existsSync(path))
const SCREENSHOT = join(ROOT, 'test', 'output', 'playground.png')

describe.skipIf(BROWSER === undefined)(
  `playground in headless Chromium${BROWSER ? '' : ' (skipped: no chromium; apt-get install chromium or set CHROME_PATH)'}`,
  () => {
    let serve: RunningServe
    let browser: Browser

    beforeAll(async () => {
      serve = await startServe([], { savedDemo: true })
      browser = await puppeteer.launch({
        executablePath: BROWSER,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
      })
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
      await serve?.stop()
    })

    it('runs a real selection from the page and saves a screenshot', async () => {
      const page = await browser.newPage()
      await page.setViewport({ width: 1280, height: 900 })
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(String(error)))
      await page.goto(`${serve.url}/`, { waitUntil: 'networkidle0' })
      expect(page.url()).toBe(`${serve.url}/ui`)

      // Libraries and components come from the service, not from the page.
      await page.waitForSelector('#library option')
      expect(await page.$eval('#library', (select) => (select as HTMLSelectElement).value)).toBe(
        'demo',
      )
      const planners = await page.$$eval('#planners option', (options) =>
        options.map((option) => (option as HTMLOptionElement).value),
      )
      expect(planners).toEqual(expect.arrayContaining(['rule', 'none', 'llm:']))
      expect(
        await page.$eval('#retriever', (input) => (input as HTMLInputElement).placeholder),
      ).toMatch(/^default: /)

      await page.click('[data-testid=run]')
      await page.waitForSelector('[data-testid=candidate]')
      const selected = await page.$$eval('[data-testid=selected-tool] strong', (nodes) =>
        nodes.map((node) => node.textContent),
      )
      expect(selected).toEqual(['weather.get_weather_forecast', 'mail.send_email'])
      expect(await page.$$eval('[data-testid=step]', (steps) => steps.length)).toBe(3) // two planned steps and the whole instruction (the learned selector's)
      const bars = await page.$$eval('.candidate .bar > div', (fills) =>
        fills.map((fill) => (fill as HTMLElement).style.width),
      )
      expect(bars.length).toBeGreaterThan(2)
      expect(bars).toContain('100%')
      expect(await page.$eval('[data-testid=timings]', (table) => table.textContent)).toContain(
        'total',
      )
      expect(await page.$eval('[data-testid=savings]', (node) => node.textContent)).toMatch(
        /instead of the whole library: about \d+ tokens for 197 tools/,
      )

      // The selected tools as an agent's tool definitions, in the chosen API's shape.
      expect(
        await page.$eval('[data-testid=tool-definitions]', (node) => node.textContent),
      ).toContain('"id": "mail.send_email"')
      await page.select('[data-testid=tool-format]', 'anthropic')
      await page.waitForFunction(() =>
        document.getElementById('tool-definitions')!.textContent!.includes('input_schema'),
      )
      const definitions = JSON.parse(
        (await page.$eval('[data-testid=tool-definitions]', (node) => node.textContent))!,
      )
      expect(definitions.toolIds).toEqual({
        'weather--get_weather_forecast': 'weather.get_weather_forecast',
        'mail--send_email': 'mail.send_email',
      })
      expect(definitions.tools[1]).toMatchObject({ name: 'mail--send_email' })

      await page.type('#query', 'send an SMS text message')
      await page.click('#search-form button')
      await page.waitForSelector('#search-results li')
      await page.click('#search-results li')
      await page.waitForSelector('[data-testid=tool-detail]:not([hidden])')
      expect(await page.$eval('[data-testid=tool-detail]', (node) => node.textContent)).toContain(
        '"parameters"',
      )

      await mkdir(join(ROOT, 'test', 'output'), { recursive: true })
      await page.screenshot({ path: SCREENSHOT, fullPage: true })
      expect((await stat(SCREENSHOT)).size).toBeGreaterThan(10_000)
      expect(errors).toEqual([])
    }, 120_000)

    it('takes an API key when the service requires one, and says so when it is missing', async () => {
      const key = 'playground-admin-key-0123456789'
      const keyed = await startServe([], { savedDemo: true, env: { TOOLSEL_ADMIN_KEY: key } })
      try {
        const page = await browser.newPage()
        const errors: string[] = []
        page.on('pageerror', (error) => errors.push(String(error)))
        await page.goto(`${keyed.url}/ui`, { waitUntil: 'networkidle0' })
        // The page had no way to send a key: every call was a 401 and it stayed "not reachable".
        await page.waitForFunction(() =>
          document.getElementById('error')!.textContent!.includes('UNAUTHORIZED'),
        )
        expect(await page.$eval('[data-testid=error]', (node) => node.textContent)).toContain(
          'Enter a read key (or the admin key) under "API key" at the top.',
        )
        await page.type('[data-testid=api-key]', key)
        await page.keyboard.press('Enter')
        await page.waitForSelector('#library option')
        expect(await page.$eval('#service-status', (node) => node.textContent)).toMatch(
          /libraries loaded/,
        )
        expect(await page.$eval('[data-testid=error]', (node) => node.textContent)).toBe('')
        await page.click('[data-testid=run]')
        await page.waitForSelector('[data-testid=selected-tool]')
        expect(errors).toEqual([])
      } finally {
        await keyed.stop()
      }
    }, 120_000)

    it('works from the keyboard, and an error does not leave the last answer on screen', async () => {
      const page = await browser.newPage()
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(String(error)))
      await page.goto(`${serve.url}/ui`, { waitUntil: 'networkidle0' })
      await page.waitForSelector('#library option')
      expect(await page.$eval('[data-testid=error]', (node) => node.getAttribute('role'))).toBe(
        'alert',
      )
      // Search results are reached with Tab and opened with Enter (a clickable <li> was not).
      await page.focus('#query')
      await page.keyboard.type('send an SMS text message')
      await page.keyboard.press('Enter')
      await page.waitForSelector('#search-results li button')
      await page.keyboard.press('Tab') // the Search button
      await page.keyboard.press('Tab') // the first result
      expect(await page.evaluate(() => document.activeElement?.textContent)).toMatch(/^sms\./)
      await page.keyboard.press('Enter')
      await page.waitForSelector('[data-testid=tool-detail]:not([hidden])')

      // Past the first 20 matches: "Show more" asks for 20 more, up to the service's maxK (there
      // was no way to see a 21st match). "get" matches 51 of the demo's 197 tools.
      expect(await page.$eval('body', (body) => body.dataset.maxK)).toBe('100')
      const matches = () =>
        page.$$eval('#search-results li button[data-id]', (nodes) => nodes.length)
      await page.$eval('#query', (input) => ((input as HTMLInputElement).value = ''))
      await page.type('#query', 'get')
      await page.click('#search-form button')
      await page.waitForSelector('[data-testid=more]')
      expect(await matches()).toBe(20)
      await page.focus('[data-testid=more]')
      await page.keyboard.press('Enter')
      await page.waitForFunction(
        () => document.querySelectorAll('#search-results li button[data-id]').length === 40,
      )
      // The keyboard goes on from the 21st match.
      expect(
        await page.evaluate(() =>
          Array.from(document.querySelectorAll('#search-results li button[data-id]')).indexOf(
            document.activeElement!,
          ),
        ),
      ).toBe(20)
      await page.click('[data-testid=more]')
      await page.waitForFunction(
        () => document.querySelectorAll('#search-results li button[data-id]').length === 51,
      )
      expect(await page.$('[data-testid=more]')).toBeNull()

      // An answer, then a request the API refuses: the error alone, not next to the old answer.
      await page.click('[data-testid=run]')
      await page.waitForSelector('[data-testid=selected-tool]')
      // (k 5000 no longer reaches the API: the k field's max is the service's maxK.)
      expect(await page.$eval('#k', (input) => (input as HTMLInputElement).max)).toBe('100')
      await page.$eval('#retriever', (input) => ((input as HTMLInputElement).value = 'nope'))
      await page.click('[data-testid=run]')
      await page.waitForFunction(() =>
        document.getElementById('error')!.textContent!.startsWith('INVALID_INPUT: '),
      )
      expect(await page.$eval('#result', (node) => (node as HTMLElement).hidden)).toBe(true)
      // No candidate: the savings line does not estimate the library at "about 0 tokens".
      await page.$eval('#retriever', (input) => ((input as HTMLInputElement).value = ''))
      await page.$eval('#instruction', (input) => ((input as HTMLTextAreaElement).value = 'qqzx'))
      await page.click('[data-testid=run]')
      await page.waitForSelector('#result:not([hidden])')
      expect(await page.$eval('[data-testid=savings]', (node) => node.textContent)).toContain(
        'instead of the whole library of 197 tools (no candidate schema to estimate its size from)',
      )
      expect(await page.$eval('[data-testid=error]', (node) => node.textContent)).toBe('')
      // The service gone: what to check, not the browser's "Failed to fetch".
      await page.setOfflineMode(true)
      await page.click('[data-testid=run]')
      await page.waitForFunction(() =>
        document.getElementById('error')!.textContent!.startsWith('UNREACHABLE: '),
      )
      expect(await page.$eval('[data-testid=error]', (node) => node.textContent)).toContain(
        `Is toolsel serve still running at ${serve.url}?`,
      )
      await page.setOfflineMode(false)
      expect(errors).toEqual([])
    }, 120_000)

    it('shows a hostile library, error and URL as text only; its CSP allows nothing else', async () => {
      // A library whose names, descriptions and parameters are markup that would run as HTML.
      const markup = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
      const tools = [
        {
          name: `send_sms${markup}`,
          description: `Send an SMS text message to a phone ${markup}`,
          parameters: {
            type: 'object',
            properties: { [`to${markup}`]: { type: 'string', description: markup } },
          },
        },
      ]
      const put = await fetch(`${serve.url}/v1/libraries/hostile`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(tools),
      })
      expect(put.status).toBe(201)
      const page = await browser.newPage()
      const problems: string[] = []
      page.on('pageerror', (error) => problems.push(String(error)))
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text())
      })
      const response = await page.goto(
        `${serve.url}/ui?library=${encodeURIComponent(markup)}#${encodeURIComponent(markup)}`,
        { waitUntil: 'networkidle0' },
      )
      const policy = response!.headers()['content-security-policy']
      expect(policy).toMatch(/default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-/)
      expect(policy).toContain("connect-src 'self'")
      expect(policy).toContain("frame-ancestors 'none'")
      await page.waitForSelector('#library option')
      await page.select('#library', 'hostile')
      await page.$eval('#instruction', (input) => ((input as HTMLTextAreaElement).value = ''))
      await page.type('#instruction', 'send an sms text message')
      await page.click('[data-testid=run]')
      await page.waitForSelector('[data-testid=selected-tool]')
      expect(await page.$eval('[data-testid=selected-tool]', (node) => node.textContent)).toContain(
        markup,
      )
      expect(
        await page.$eval('[data-testid=tool-definitions]', (node) => node.textContent),
      ).toContain('onerror')
      await page.type('#query', 'send an sms text message')
      await page.click('#search-form button')
      await page.waitForSelector('#search-results li button[data-id]')
      await page.click('#search-results li button[data-id]')
      await page.waitForSelector('[data-testid=tool-detail]:not([hidden])')
      // An error message that quotes the request: a retriever named as markup.
      await page.type('#retriever', markup)
      await page.click('[data-testid=run]')
      await page.waitForFunction(() => document.getElementById('error')!.textContent !== '')
      expect(await page.$eval('[data-testid=error]', (node) => node.textContent)).toContain(
        '<img src=x',
      )
      expect(await page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined()
      expect(await page.$$eval('main img, main script', (nodes) => nodes.length)).toBe(0)
      // The page's own script ran under the policy (it filled everything above); the
      // answers to the bad retriever are its only errors.
      expect(
        problems.filter((problem) => !/the server responded with a status of 4/.test(problem)),
      ).toEqual([])
      await fetch(`${serve.url}/v1/libraries/hostile`, { method: 'DELETE' })
    }, 120_000)

    // Before, every empty step read "no candidate above the score threshold", also when nothing
    // matched; now the page says why, in the words `toolsel select` prints
    // (service/empty-step-reason.ts, test/cli/select-empty-step.test.ts).
    it('says why a step has no candidate: nothing matches, or which threshold cut the best', async () => {
      const strict = await startServe([], { savedDemo: true, env: { TOOLSEL_TAU: '500' } })
      try {
        const page = await browser.newPage()
        const errors: string[] = []
        page.on('pageerror', (error) => errors.push(String(error)))
        await page.goto(`${strict.url}/ui`, { waitUntil: 'networkidle0' })
        await page.waitForSelector('#library option')
        const run = async (instruction: string) => {
          await page.$eval('#instruction', (input) => ((input as HTMLInputElement).value = ''))
          await page.type('#instruction', instruction)
          await page.$eval('#planner', (input) => ((input as HTMLInputElement).value = 'none'))
          await page.$eval('#selector', (input) => ((input as HTMLInputElement).value = 'top1'))
          await page.$eval('#result', (node) => ((node as HTMLElement).hidden = true))
          await page.click('[data-testid=run]')
          await page.waitForSelector('#result:not([hidden]) [data-testid=empty-step]')
          return page.$eval('[data-testid=empty-step]', (node) => node.textContent)
        }
        expect(await run('frobnicate the wibble')).toBe(
          'no candidate: no tool of the library matches this step',
        )
        expect(await run('weather forecast for Oslo')).toMatch(
          /^no candidate above the threshold retrieve\.bm25\.tau = 500; the best, weather\.\w+, scored \d+\.\d\d$/,
        )
        expect(errors).toEqual([])
      } finally {
        await strict.stop()
      }
    })

    it('links the latest benchmark report', async () => {
      const page = await browser.newPage()
      const response = await page.goto(`${serve.url}/ui/report`)
      expect(response?.status()).toBe(200)
      expect(await page.content()).toContain('<table')
    }, 60_000)
  },
)

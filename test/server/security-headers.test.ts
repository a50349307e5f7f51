/**
 * Response headers a browser acts on (round 26, sec12): every answer says
 * `X-Content-Type-Options: nosniff` (a JSON error that echoes a path is never sniffed as HTML),
 * and the playground pages may not be framed by another site (clickjacking):
 * `X-Frame-Options: DENY` and `Content-Security-Policy: frame-ancestors 'none'`; `/ui` itself
 * allows only its own inline script and style, by hash, and calls to its own origin (round 29,
 * hard15), and its script puts text on the page as text only.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createComponents } from '../../src/components.ts'
import { parseConfig } from '../../src/config/load-config.ts'
import { createMemoryLogger } from '../../src/log.ts'
import { createApp, type ToolselApp } from '../../src/server/app.ts'
import { ToolselService } from '../../src/service/toolsel-service.ts'
import { listenApp } from '../helpers/listen-app.ts'

describe('security headers over HTTP', () => {
  let url: string
  let app: ToolselApp
  let close: () => Promise<void>

  beforeAll(async () => {
    const config = parseConfig({
      log: { level: 'silent' },
      library: { default: 'demo', loadAll: false },
    })
    const logger = createMemoryLogger()
    const service = new ToolselService(config, logger, createComponents(config, logger))
    await service.start()
    app = createApp(service)
    const listening = await listenApp(app.fetch)
    url = listening.url
    close = () => listening.close()
  })
  afterAll(async () => {
    await close()
    await app.close()
  })

  it('every answer is nosniff; the playground pages may not be framed', async () => {
    const answers = await Promise.all([
      fetch(`${url}/healthz`),
      fetch(`${url}/v1/libraries`),
      fetch(`${url}/v1/nothing-here`),
      fetch(`${url}/v1/search-tools`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"send an email"}',
      }),
    ])
    for (const answer of answers) {
      expect(answer.headers.get('x-content-type-options'), answer.url).toBe('nosniff')
      expect(answer.headers.get('x-frame-options'), answer.url).toBeNull()
    }
    for (const path of ['/ui', '/ui/report']) {
      const page = await fetch(`${url}${path}`)
      expect(page.headers.get('x-content-type-options'), path).toBe('nosniff')
      expect(page.headers.get('x-frame-options'), path).toBe('DENY')
      if (path === '/ui/report')
        expect(page.headers.get('content-security-policy'), path).toBe("frame-ancestors 'none'")
    }
  })

  it('/ui: a CSP naming its one inline script and style by hash, nothing else; text as text', async () => {
    const page = await fetch(`${url}/ui`)
    const html = await page.text()
    const sha = (tag: string) => {
      const blocks = [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))]
      expect(blocks, tag).toHaveLength(1)
      return `'sha256-${createHash('sha256').update(blocks[0][1]).digest('base64')}'`
    }
    expect(page.headers.get('content-security-policy')).toBe(
      [
        "default-src 'none'",
        `script-src ${sha('script')}`,
        `style-src ${sha('style')}`,
        "connect-src 'self'",
        "img-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join('; '),
    )
    // No inline handler or style attribute the policy would block, no way to write markup, no
    // reading of the URL, no key kept in storage.
    expect(html).not.toMatch(/\son[a-z]+=|\sstyle=/)
    const script = html.slice(html.indexOf('<script>'), html.indexOf('</script>'))
    expect(script).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function|setAttribute\(|localStorage|sessionStorage|location\.(search|hash|href)|srcdoc/,
    )
  })
})

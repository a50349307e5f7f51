/**
 * The playground: `GET /ui` serves one HTML page (no build step, no external resources) that
 * calls this service's own API; `GET /` redirects there; `GET /ui/report` serves the newest
 * benchmark report (`bench.outDir/<run>/report.html`, else the committed baseline).
 */
import { createHash } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Hono, type MiddlewareHandler } from 'hono'
import { emptyStepTemplates } from '../../service/empty-step-reason.ts'
import type { ToolselService } from '../../service/toolsel-service.ts'

const PAGE = fileURLToPath(new URL('../ui/playground.html', import.meta.url))
const BASELINE_REPORT = fileURLToPath(
  new URL('../../../bench/results/default/report.html', import.meta.url),
)

/** The pages may not be framed by another site (clickjacking). */
const noFraming: MiddlewareHandler = async (c, next) => {
  await next()
  c.res.headers.set('X-Frame-Options', 'DENY')
  // /ui sets its own, stricter policy (playgroundPolicy), with frame-ancestors 'none' in it.
  if (!c.res.headers.has('Content-Security-Policy'))
    c.res.headers.set('Content-Security-Policy', "frame-ancestors 'none'")
}

/**
 * The playground's Content-Security-Policy: its one inline script and one inline style by hash,
 * calls to this service only, nothing else (no other script, no eval, no plugin, no form post,
 * no <base>). Should a tool's name or an error message ever reach the page as markup, no script
 * of it would run.
 */
export function playgroundPolicy(html: string): string {
  const hash = (tag: 'script' | 'style') => {
    const blocks = [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))]
    return (
      blocks
        .map(([, body]) => `'sha256-${createHash('sha256').update(body).digest('base64')}'`)
        .join(' ') || "'none'"
    )
  }
  return [
    "default-src 'none'",
    `script-src ${hash('script')}`,
    `style-src ${hash('style')}`,
    "connect-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}

export function playgroundRoutes(service: ToolselService) {
  let page: Promise<{ html: string; policy: string }> | undefined
  return new Hono()
    .get('/', (c) => c.redirect('/ui'))
    .use('/ui', noFraming)
    .use('/ui/*', noFraming)
    .get('/ui', async (c) => {
      // The page asks for at most server.maxK matches ("Show more" in the library browser).
      page ??= readFile(PAGE, 'utf8').then((file) => {
        // And the sentences of a step without candidates, as the CLI words them.
        const emptyStep = JSON.stringify(emptyStepTemplates(service.config.retrieve.bm25.tau))
        const html = file.replace(
          '<body data-max-k="100" data-empty-step="{}">',
          `<body data-max-k="${service.config.server.maxK}" data-empty-step="${attribute(emptyStep)}">`,
        )
        return { html, policy: playgroundPolicy(html) }
      })
      const { html, policy } = await page
      c.header('Content-Security-Policy', policy)
      return c.html(html)
    })
    .get('/ui/report', async (c) => {
      const report = await latestReport(service.config.bench.outDir)
      if (report === undefined) {
        return c.html('<p>No benchmark report yet: run <code>npm run bench</code>.</p>', 404)
      }
      return c.html(await readFile(report, 'utf8'))
    })
}

/** `text` as an HTML attribute's value between double quotes. */
function attribute(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('"', '&quot;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
}

/** The most recently written `<outDir>/<run>/report.html`, else the committed baseline. */
async function latestReport(outDir: string): Promise<string | undefined> {
  let newest: { path: string; time: number } | undefined
  try {
    for (const entry of await readdir(outDir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      const path = join(outDir, entry.name, 'report.html')
      const time = await stat(path).then(
        (info) => info.mtimeMs,
        () => undefined,
      )
      if (time !== undefined && (newest === undefined || time > newest.time)) {
        newest = { path, time }
      }
    }
  } catch {
    // No output directory yet: fall back to the baseline.
  }
  if (newest) return newest.path
  return stat(BASELINE_REPORT).then(
    () => BASELINE_REPORT,
    () => undefined,
  )
}

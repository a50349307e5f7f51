// `npm run build` (and `prepare`, so `npm ci` runs it): compiles src/ to dist/ with the TypeScript
// compiler (emit only: `npm run typecheck` checks types), mirroring src/'s layout so that paths
// relative to a module (`new URL('../ui/playground.html', import.meta.url)`) resolve the same, and
// copies src/'s other files (the demo library, prompts, the use-lite worker…). bin/toolsel.mjs
// runs dist/ while it is up to date (see bin/dist-freshness.mjs) and src/ through tsx otherwise.
// Without the TypeScript compiler (`npm ci --omit=dev`) it builds nothing and says so.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BUILD_INFO_FILE, sourceFingerprint } from '../bin/dist-freshness.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const src = join(root, 'src')
const dist = join(root, 'dist')
const require = createRequire(import.meta.url)

let tsc
try {
  tsc = require.resolve('typescript/bin/tsc')
} catch {
  console.warn(
    'build: the TypeScript compiler is not installed; bin/toolsel.mjs will run src/ through tsx.',
  )
  process.exit(0)
}
// The fingerprint is taken first: a file changed during the build makes dist/ stale, not fresh.
const fingerprint = sourceFingerprint(src)
rmSync(dist, { recursive: true, force: true })
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || entry.name.endsWith('.ts')) continue
  const from = join(entry.parentPath ?? entry.path, entry.name)
  const to = join(dist, relative(src, from))
  mkdirSync(dirname(to), { recursive: true })
  cpSync(from, to)
}
writeFileSync(join(dist, BUILD_INFO_FILE), `${JSON.stringify(fingerprint)}\n`)
console.log(`build: src/ compiled to dist/ (${fingerprint.files} files).`)

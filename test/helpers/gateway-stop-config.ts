/** A config file for a toolsel child with a gateway of marked upstream processes (stop tests). */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Makes a stdio upstream entry: `node script` with the test's marker as its argument. */
export type MarkedNode = (script: string, env?: Record<string, string>) => object

/**
 * Writes `<new temp dir>/config.json`: library demo (not loading all), `server.shutdownGraceMs`
 * `graceMs`, and the gateway section `gateway(node)` makes. The marker names the upstream
 * processes (`processesWith(marker)`); the caller removes `dir`.
 */
export async function writeGatewayStopConfig(
  prefix: string,
  graceMs: number,
  gateway: (node: MarkedNode) => object,
): Promise<{ marker: string; dir: string; config: string }> {
  const marker = `${prefix}-${process.pid}-${Date.now()}`
  const dir = await mkdtemp(join(tmpdir(), `toolsel-${prefix}-`))
  const node: MarkedNode = (script, env = {}) => ({
    command: process.execPath,
    args: [script, marker],
    env,
  })
  const config = join(dir, 'config.json')
  await writeFile(
    config,
    JSON.stringify({
      library: { default: 'demo', loadAll: false },
      server: { shutdownGraceMs: graceMs },
      gateway: gateway(node),
    }),
  )
  return { marker, dir, config }
}

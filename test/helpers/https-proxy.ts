/**
 * A real HTTPS endpoint for the clients' TLS tests: a throwaway CA and a certificate for
 * `localhost` (only) that it signed, made by `openssl` at test time, and a TLS-terminating Node
 * `https` proxy in front of a real `toolsel serve` (plain HTTP). Two more paths test the clients'
 * limits over TLS: `/drip/…` answers a body that never ends (a byte every 100 ms), `/huge/…` one
 * of 2 MB.
 * @module
 */
import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServe } from './start-serve.ts'

/** Why no certificate can be made here (no openssl on PATH), or undefined. */
export function opensslMissing(): string | undefined {
  const openssl = spawnSync('openssl', ['version'], { encoding: 'utf8' })
  return openssl.error || openssl.status !== 0
    ? 'no openssl on PATH to make a throwaway certificate'
    : undefined
}

export interface HttpsProxy {
  /** Where the certificates are: `ca.pem` (the CA), `server.pem`, `server.key`, `server.ext`. */
  dir: string
  /** The proxy's port on 127.0.0.1 (`https://localhost:<port>` matches its certificate). */
  port: number
  /** TLS connections the proxy accepted so far (a handshake each). */
  handshakes: () => number
  close: () => Promise<void>
}

function run(command: string[], cwd: string): void {
  const result = spawnSync(command[0], command.slice(1), { cwd, encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`${command.join(' ')}: ${result.stderr}`)
}

/** A CA, and a certificate for `localhost` (only) that it signed. */
async function makeCertificates(where: string): Promise<void> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  run(
    ['openssl', 'req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2']
      .concat(['-subj', '/CN=toolsel test CA'])
      .concat(['-addext', 'basicConstraints=critical,CA:TRUE'])
      .concat(['-addext', 'keyUsage=critical,keyCertSign,cRLSign']),
    where,
  )
  run(
    [
      'openssl',
      'req',
      ...ec,
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      '/CN=localhost',
    ],
    where,
  )
  await writeFile(
    join(where, 'server.ext'),
    [
      'subjectAltName=DNS:localhost',
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
      'subjectKeyIdentifier=hash',
      'authorityKeyIdentifier=keyid',
    ].join('\n'),
  )
  run(
    ['openssl', 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key'].concat([
      '-set_serial',
      '1',
      '-days',
      '2',
      '-extfile',
      'server.ext',
      '-out',
      'server.pem',
    ]),
    where,
  )
}

/** Makes the certificates, starts a serve and the proxy before it. */
export async function startHttpsProxy(): Promise<HttpsProxy> {
  const dir = await mkdtemp(join(tmpdir(), 'toolsel-https-'))
  await makeCertificates(dir)
  const serve = await startServe()
  const upstream = new URL(serve.url)
  let handshakes = 0
  const proxy = createServer(
    {
      key: await readFile(join(dir, 'server.key')),
      cert: await readFile(join(dir, 'server.pem')),
    },
    (request, response) => {
      // A body that drips (one byte every 100 ms, never ending) and one that is too large.
      if (request.url!.startsWith('/drip/')) {
        response.writeHead(200, { 'content-type': 'application/json' })
        const timer = setInterval(() => response.write(' '), 100)
        response.on('close', () => clearInterval(timer))
        return
      }
      if (request.url!.startsWith('/huge/')) {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(`[${'1,'.repeat(1_000_000)}1]`)
        return
      }
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: request.method,
          path: request.url,
          headers: { ...request.headers, host: upstream.host },
        },
        (answer) => {
          response.writeHead(answer.statusCode!, answer.headers)
          answer.pipe(response)
        },
      )
      forward.on('error', () => response.destroy())
      request.pipe(forward)
    },
  )
  proxy.on('secureConnection', () => (handshakes += 1))
  proxy.listen(0, '127.0.0.1')
  await once(proxy, 'listening')
  return {
    dir,
    port: (proxy.address() as AddressInfo).port,
    handshakes: () => handshakes,
    close: async () => {
      proxy.closeAllConnections()
      proxy.close()
      await serve.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

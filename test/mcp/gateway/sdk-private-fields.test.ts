/**
 * The SDK's private fields the gateway relies on (create-upstream-transport.ts): an SDK whose
 * StdioClientTransport lacks them fails by name, at once, not by answers over
 * `gateway.maxMessageBytes` closing the transport or upstream processes left running at close.
 * Real SDK transports and processes; a subclass stands for an SDK that renamed the field.
 */
import type { ChildProcess } from 'node:child_process'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { describe, expect, it } from 'vitest'
import { BoundedReadBuffer } from '../../../src/mcp/gateway/bounded-read-buffer.ts'
import {
  killProcess,
  replaceReadBuffer,
  trackProcess,
} from '../../../src/mcp/gateway/create-upstream-transport.ts'

/** An SDK that keeps its process under another name (and says its pid from there). */
class RenamedProcessTransport extends StdioClientTransport {
  child: ChildProcess | undefined
  override async start(): Promise<void> {
    await super.start()
    const self = this as unknown as { _process?: ChildProcess }
    this.child = self._process
    self._process = undefined
  }
  override get pid(): number | null {
    return this.child?.pid ?? null
  }
}

describe("the SDK's private StdioClientTransport fields", () => {
  it('tracks the process with the pinned SDK: killProcess ends it', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'],
    })
    trackProcess(transport)
    await transport.start()
    expect(transport.pid).toBeGreaterThan(0)
    expect(killProcess(transport)).toBe(true)
    await transport.close()
    expect(killProcess(transport)).toBe(false)
  })

  it('fails the start by name without _process, and SIGKILLs the process it started', async () => {
    const transport = new RenamedProcessTransport({
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
    })
    trackProcess(transport)
    try {
      await expect(transport.start()).rejects.toThrow(/StdioClientTransport has no _process/)
      const child = transport.child!
      if (child.exitCode === null && child.signalCode === null)
        await new Promise((resolve) => child.once('exit', resolve))
      expect(child.signalCode).toBe('SIGKILL')
    } finally {
      const child = transport.child
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  })

  it('refuses a transport without _readBuffer {append, readMessage, clear}, by name', () => {
    const transport = new StdioClientTransport({ command: process.execPath })
    delete (transport as unknown as { _readBuffer?: unknown })._readBuffer
    expect(() =>
      replaceReadBuffer(transport, new BoundedReadBuffer(1000, () => undefined)),
    ).toThrow(/has no _readBuffer \{append, readMessage, clear\}/)
  })
})

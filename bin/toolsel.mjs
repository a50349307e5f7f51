#!/usr/bin/env node
// Runs the compiled JavaScript in dist/ (`npm ci` builds it: the `prepare` script) while it
// matches src/, else the TypeScript sources directly through tsx's loader (about a second of
// start-up and 30 MiB more), so an edited checkout never runs stale code.
import cluster from 'node:cluster'
import { fileURLToPath } from 'node:url'
import { isDistFresh } from './dist-freshness.mjs'

const src = fileURLToPath(new URL('../src', import.meta.url))
const dist = fileURLToPath(new URL('../dist', import.meta.url))
let entry
if (process.env.TOOLSEL_RUN_SOURCE !== '1' && isDistFresh(src, dist)) {
  entry = '../dist/main.js'
} else {
  const { register } = await import('tsx/esm/api')
  register()
  entry = '../src/main.ts'
}
const { main } = await import(entry)
process.exitCode = await main(process.argv.slice(2))
// A worker of `serve --workers N` whose start failed: its channel to the primary would keep it
// alive, serving nothing, and the primary would never hear that it ended. Through the worker's
// own disconnect, so that it exits with its exit code (process.disconnect() exits it with 0).
if (cluster.isWorker && process.connected) cluster.worker.disconnect()

/**
 * Progress output for long work (index builds, benchmarks, training data) on the command's
 * stderr (`CommandIO.stderr`, so a test that runs a command in process captures it): a redrawn
 * bar on a terminal, a line every 10% otherwise (CI logs stay short).
 * @module
 */
import { terminalText } from '../terminal-text.ts'
import type { CommandIO } from './cli-options.ts'

/** Where progress goes: a write, and whether it is a terminal (a bar redrawn in place). */
export interface ProgressOutput {
  write(text: string): void
  isTTY: boolean
}

/** The command's stderr; a terminal only when `io` says so (`main` does for the real stderr). */
export function progressOutput(io: CommandIO): ProgressOutput {
  return { write: (text) => io.stderr(text), isTTY: io.stderrIsTTY === true }
}

export interface ProgressReporter {
  update(done: number, total: number, label?: string): void
  done(message?: string): void
}

export function createProgress(titled: string, stream: ProgressOutput): ProgressReporter {
  // A title or label names a file or a split, from elsewhere: no escape reaches the terminal.
  const oneLine = (text: string) => terminalText(text).replace(/[\n\t]/g, ' ')
  const title = oneLine(titled)
  const started = performance.now()
  let lastDecile = -1
  let lastDraw = 0
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)}s`
  return {
    update(done, total, text = '') {
      const label = oneLine(text)
      const fraction = total > 0 ? Math.min(1, done / total) : 1
      if (stream.isTTY) {
        const now = performance.now()
        if (now - lastDraw < 50 && done < total) return
        lastDraw = now
        const width = 30
        const filled = Math.round(fraction * width)
        stream.write(
          `\r${title} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${elapsed()} ${label}`.padEnd(
            100,
          ),
        )
      } else {
        const decile = Math.floor(fraction * 10)
        if (decile === lastDecile) return
        lastDecile = decile
        stream.write(`${title}: ${done}/${total} (${decile * 10}%) ${elapsed()} ${label}\n`)
      }
    },
    done(message = 'done') {
      stream.write(
        `${stream.isTTY ? '\r' : ''}${title}: ${message} in ${elapsed()}`.padEnd(
          stream.isTTY ? 100 : 0,
        ) + '\n',
      )
    },
  }
}

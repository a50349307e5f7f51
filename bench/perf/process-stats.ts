/**
 * Small measures the start-up bench scripts share (bench/start-to-ready.ts,
 * bench/gateway-start.ts): a process's CPU seconds from /proc, a median, the load average.
 * @module
 */
import { readFile } from 'node:fs/promises'
import { loadavg } from 'node:os'

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100

/** User + system CPU seconds of process `pid` so far, all its threads. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name (which may hold spaces) in parentheses: utime is the 14th field.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
}

/** The middle value (the upper one of an even count). */
export function median(numbers: readonly number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/** The 1, 5 and 15 minute load averages, as `8.05 7.41 4.59`. */
export const loadAverage = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')

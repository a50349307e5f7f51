import { main } from '../../src/main.ts'

/**
 * Runs `toolsel <argv>` in process with `env` (default empty) and `stdin` (default none); what it
 * printed, as text.
 */
export async function runCli(
  argv: string[],
  env: Record<string, string> = {},
  stdin?: AsyncIterable<Buffer | string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout: string[] = []
  const stderr: string[] = []
  const code = await main(argv, {
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
    env,
    stdin,
  })
  return { code, stdout: stdout.join(''), stderr: stderr.join('') }
}

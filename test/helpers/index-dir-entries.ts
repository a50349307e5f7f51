/** What an index directory holds, sorted, without its writer-protocol marker. */
import { readdir } from 'node:fs/promises'
import { WRITER_PROTOCOL_FILE } from '../../src/store/index-dir-claims.ts'

export async function indexDirEntries(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((entry) => entry !== WRITER_PROTOCOL_FILE).sort()
}

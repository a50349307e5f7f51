/** Test helper: load one suite by name with default options. */
import { DATA_DIR } from '../../helpers/data-dir.ts'
import type { SuiteLoadOptions } from '../../../src/bench/suites/index.ts'
import { resolveSuites } from '../../../src/bench/suites/index.ts'

export async function loadSuite(name: string, options: Partial<SuiteLoadOptions> = {}) {
  const [suite] = resolveSuites(name)
  return suite.load({ dataDir: DATA_DIR, libraryMode: 'union', unmappable: 'drop', ...options })
}

export const mean = (values: number[]) =>
  values.reduce((sum, value) => sum + value, 0) / values.length

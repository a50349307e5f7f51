/**
 * The Python client's type hints, checked: `mypy --strict` over clients/python (the package, its
 * tests, examples and scripts) when python3 can import mypy; mypy is not a dependency of this
 * project, so without it the test is skipped and says why (`pip install mypy` to run it).
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findPython, runPython } from '../helpers/run-python.ts'
import { ROOT } from '../helpers/start-serve.ts'

const python = findPython()
const mypy = python.ok
  ? spawnSync('python3', ['-m', 'mypy', '--version'], { encoding: 'utf8' })
  : undefined
const skipped = !python.ok
  ? python.reason
  : mypy!.status !== 0
    ? 'python3 cannot import mypy (pip install mypy to run it)'
    : undefined

describe.skipIf(skipped !== undefined)(
  `the Python client under mypy --strict${skipped ? ` (skipped: ${skipped})` : ` (${mypy!.stdout.trim()})`}`,
  () => {
    it('finds no issue in the package, its tests, examples and scripts', async () => {
      const run = await runPython(
        'python3',
        [
          '-c',
          'import os, sys; os.chdir(sys.argv[1]); from mypy import api; out, err, code = api.run(["--cache-dir", os.devnull] + sys.argv[2:]); print(out + err); sys.exit(code)',
          join(ROOT, 'clients/python'),
          '--strict',
          // The oldest mypy 2 checks for (the client runs on 3.9+).
          '--python-version',
          '3.10',
          '--no-incremental',
          'src',
          'tests',
          'examples',
          'scripts',
        ],
        { env: { PATH: process.env.PATH, HOME: process.env.HOME } },
      )
      expect(run.code, `${run.out}${run.err}`).toBe(0)
      expect(run.out).toMatch(/Success: no issues found in \d+ source files/)
    }, 120_000)
  },
)

/**
 * The names of the benchmark suites (suite-registry.ts's SUITES, in its order), apart from the
 * suites' code so that `toolsel bench --help` can list them without loading it
 * (bench/README.md, "CLI start cost", round 49; test/cli/cli-help-output.test.ts checks the two
 * agree).
 * @module
 */

export const SUITE_NAMES: readonly string[] = [
  'toolbench-g1',
  'toolbench-g2',
  'toolbench-g3',
  'toollens',
  'toolbench-g3-colt',
  'gorilla-torchhub',
  'gorilla-huggingface',
  'gorilla-tensorflow',
  'craft-math',
  'craft-tabmwp',
  'craft-vqa',
  'taskbench-huggingface',
  'taskbench-multimedia',
  'taskbench-dailylifeapis',
  'demo',
]

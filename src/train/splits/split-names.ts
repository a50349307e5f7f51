/**
 * The suites with a training split (index.ts's TRAIN_SPLITS, in its order), apart from their
 * readers so that `toolsel train-data --help` can list them without loading those
 * (bench/README.md, "CLI start cost", round 49; TypeScript checks TRAIN_SPLITS has exactly these
 * keys, test/cli/help-modules.test.ts their order).
 * @module
 */

export const TRAIN_SPLIT_NAMES = ['toolbench-g3', 'toollens'] as const

export type TrainSplitName = (typeof TRAIN_SPLIT_NAMES)[number]

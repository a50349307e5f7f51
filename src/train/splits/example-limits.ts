/**
 * The bounds of a training examples file, apart from its reader so that `--help` texts can
 * quote them without loading it (bench/README.md, "CLI start cost", round 49).
 * @module
 */

/**
 * Most examples a training examples file may hold (`toolsel train`, `train-data`): the file is
 * refused as soon as its reading passes this many, not after all of it is parsed (3,000,000
 * lines were 1.7-2.1 GB of memory before the count was looked at).
 */
export const MAX_TRAIN_EXAMPLES = 200_000

/**
 * Most examples `--max-examples` may allow: every example read is kept until training (about
 * 1 KB each with its place and id), so a million is about 1 GB.
 */
export const MAX_TRAIN_EXAMPLES_LIMIT = 1_000_000

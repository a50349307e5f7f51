/**
 * The boosted trees' settings `toolsel train` uses, apart from the training code so that
 * `toolsel train --help` can quote them without loading it (bench/README.md, "CLI start cost",
 * round 49).
 * @module
 */

export interface TreeSettings {
  trees: number
  depth: number
  learningRate: number
  lambda?: number
  minChildWeight?: number
  /** Feature names the trees split on; default TREE_FEATURES. */
  features?: readonly string[]
}

/** `toolsel train --model gbt`'s trees (chosen on the held-out folds of seeds 1 and 2). */
export const GBT_SETTINGS: TreeSettings = { trees: 100, depth: 4, learningRate: 0.1 }

export interface DecisionTreeSettings {
  tool?: TreeSettings
  set?: TreeSettings
}

/**
 * `toolsel train`'s trees in the decision (`--decision gbt`, the default): chosen on the
 * decision's held-out halves of seeds 1 and 2 (bench/decision-trees-dev.ts).
 */
export const DECISION_TREE_SETTINGS: DecisionTreeSettings = {
  tool: { trees: 100, depth: 4, learningRate: 0.1 },
  set: { trees: 100, depth: 4, learningRate: 0.1 },
}

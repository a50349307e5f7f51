/**
 * The JSON cache bench/learn/dump-features.ts writes and bench/learn/experiment.ts reads: every
 * training and benchmark query's candidate features, so that model experiments need not re-run
 * retrieval.
 * @module
 */

/** One query: its gold, its candidates' features and ranks, its steps' features. */
export interface QueryRow {
  id: string
  gold: string[]
  steps: number
  ids: string[]
  x: number[][]
  ranks: number[][]
  stepX: number[][]
  stepY: number[]
  wholeTop: string | null
  wholeTopScore: number
}

/** One training or benchmark set of queries. */
export interface SetDump {
  name: string
  kind: 'train' | 'eval'
  queries: QueryRow[]
}

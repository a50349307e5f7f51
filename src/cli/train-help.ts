/**
 * The help and the flags of `toolsel train`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { dirname, join, relative } from 'node:path'
import { DECISION_TREE_SETTINGS, GBT_SETTINGS } from '../learn/tree-settings.ts'
import { DEFAULT_MODEL_PATH } from '../learn/default-model-path.ts'
import { COMMON_HELP, maxFileBytesHelp, maxExamplesHelp } from './command-help.ts'

/**
 * The shipped model's path inside the package (`src/learn/…` from the sources, `dist/learn/…`
 * from the build), not the machine's absolute path: the help printed `/home/…/dist/learn/…`.
 */
const SHIPPED_MODEL = relative(join(dirname(DEFAULT_MODEL_PATH), '..', '..'), DEFAULT_MODEL_PATH)

export const HELP = `Usage: toolsel train [--data <dir>] [--out <file>]
       toolsel train --examples <file.jsonl> --library <ref> [--out <file>]

Trains the learned selector (selector "learned", the default): a logistic model over
library-independent candidate features (BM25 ratios, ranks, gaps, word coverage, clause counts,
namespace coherence) and the decision how many tools to take; then the example-aware decision
(how a library's usage examples change the answer), from the held-out queries answered with
the other training queries as usage examples. Deterministic for a given --seed.
Writes a small JSON file with a data card (sources, feature list, held-out exact match), whole
or not at all (Ctrl-C leaves no <file>.<pid>…tmp). Use it with --selector learned:<file> (a
relative path: from the current directory) or select.selector in a config file (from the
config file's directory).

Without --examples it trains on the benchmark TRAINING splits under --data (the shipped default):
ToolPlanner's coarse-instruction G3 queries on COLT's 1,419-API G3 corpus minus every query id
and text of the G3 test files, and ToolLens train. With --examples it trains on your own
examples, one JSON object a line: {"instruction": "...", "tools": ["<tool id>", ...]}.

Options:
  --data <dir>           Benchmark data root (default bench.dataDir: ../shared/data)
  --exclude <sources>    Leave training sources out, comma-separated: toolplanner-g3, toollens
  --taskbench-shapes     Also train the count on TaskBench's huggingface and multimedia requests
                         that the bench does not evaluate, labelled only one tool or two or
                         more (their tool-graph shapes): the one-tool requests of several
                         clauses teach it to keep one tool. Opt-in: on the benchmark suites it
                         changes little (bench/README.md, "Learned selector", round 16)
  --examples <file>      Usage examples (JSON Lines) instead of the benchmark splits; unknown
                         tool ids refuse the file (each named with its lines)
  --library <ref>        The tool library the examples' ids refer to, as select and serve take it:
                         a saved library's name (in --index-dir), a saved index directory
                         (indexes/<name>), demo, a tool file (any importable format) or a
                         directory of them
  --index-dir <dir>      Where saved libraries live (default indexes, env TOOLSEL_INDEX_DIR)
  --out <file>           Where to write the model (default models/learned-selector.json;
                         the shipped default is ${SHIPPED_MODEL})
  --seed <n>             Seed of the folds (which fifth is held out), the composed pairs and the
                         dense map's batch order (default 1; every seed gives other folds)
  --k <n>                Candidates per retrieved list (default 15)
  --model <linear|gbt>   The candidate model: the logistic one alone (linear, the default), or
                         with boosted trees on top (gbt: ${GBT_SETTINGS.trees} trees of depth ${GBT_SETTINGS.depth} fitted on its
                         log-odds, splitting only on bounded features; a model file of format
                         version 2). Opt-in: better on the held-out folds, not on the benchmark
                         suites (bench/README.md, "Learned selector", round 15)
  --decision <gbt|linear>  The example-aware decision's two models: logistic with boosted trees
                         on their log-odds (gbt, the default: ${DECISION_TREE_SETTINGS.tool!.trees} trees of depth ${DECISION_TREE_SETTINGS.tool!.depth} each,
                         splitting on the decision's own features; format version 2), or
                         logistic alone (linear). Only libraries with usage examples use the
                         decision (bench/README.md, "Usage examples", round 16)
  --dense                Also learn dense features: cosines of the request and its clauses to
                         each candidate with static GloVe vectors (static:glove-100d). Opt-in:
                         no broad gain on the benchmark suites, about 0.3 ms more per request
  --learned-dense        Like --dense, in a learned space: first trains two linear maps over the
                         GloVe vectors (requests, tools) so that a training request scores its
                         gold tools above the rest of its library (InfoNCE, training folds only),
                         stored in the model (bench/README.md, "Learned dense space")
  --one-clause-dense     With --dense or --learned-dense: the selector computes a one-clause plan's
                         clause dense features from the whole instruction's vector, not the
                         clause's (the clause is the instruction without its context; the
                         training rows keep the clause's; bench/README.md, "Learned dense space",
                         round 17)
  --dense-free-acceptance  With --dense or --learned-dense: also fit a candidate model without
                         the dense features (the default recipe's, on the same rows); a clause
                         that got no tool gets its most probable candidate when that model's
                         probability for it reaches the rule's per-clause floor (the rule and
                         count are chosen with it; bench/README.md, "Learned dense space",
                         round 18)
  --example-maps         The example-aware decision also reads each library's own dense space,
                         learned from its usage examples (examples.denseMap in the config serves
                         them; bench/README.md, "A library's own dense space")
${maxExamplesHelp(25)}
${maxFileBytesHelp(25)}

${COMMON_HELP}`

export const OPTIONS = {
  data: { type: 'string' },
  exclude: { type: 'string' },
  'taskbench-shapes': { type: 'boolean' },
  examples: { type: 'string' },
  library: { type: 'string' },
  'index-dir': { type: 'string' },
  out: { type: 'string' },
  seed: { type: 'string' },
  k: { type: 'string' },
  model: { type: 'string' },
  decision: { type: 'string' },
  dense: { type: 'boolean' },
  'learned-dense': { type: 'boolean' },
  'example-maps': { type: 'boolean' },
  'one-clause-dense': { type: 'boolean' },
  'dense-free-acceptance': { type: 'boolean' },
  'max-examples': { type: 'string' },
  'max-file-bytes': { type: 'string' },
} as const

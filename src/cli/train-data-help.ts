/**
 * The help and the flags of `toolsel train-data`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { TRAIN_SPLIT_NAMES } from '../train/splits/split-names.ts'
import { COMMON_HELP, maxFileBytesHelp, maxExamplesHelp } from './command-help.ts'

export const HELP = `Usage: toolsel train-data <planner|selector|grpo> (--suite <name> |
                          --examples <file> --library <ref>) [options]

Writes chat-format JSON Lines ({"messages": [...]}, as TRL, verl and OpenRLHF read them) whose
prompts are exactly the ones toolsel's llm: planner and selector send at inference, plus a data
card (data-card.md, data-card.json) with every exclusion and filter count. See docs/training.md.

  planner   planner SFT records: the planner prompt + a target plan, one step per gold tool
  selector  selector SFT records: per gold step, the selector prompt over the step's real
            candidates + the gold id (or none when the gold tool was not retrieved)
  grpo      GRPO prompt sets (grpo-planner, grpo-selector) with the gold the rewards need

Suites with a training split: ${TRAIN_SPLIT_NAMES.join(', ')} (their benchmark test
queries are excluded by id and by text).

Options:
  --suite <name>             Read the suite's training split from --data
  --split train              The only split records are written from (default train)
  --examples <file>          Your examples instead: JSON Lines of {"instruction", "tools": [ids]}
                             (and an optional "id"); unknown tool ids refuse the file
  --library <ref>            The tool library the examples' ids name, as select and serve take it:
                             a saved library's name (in --index-dir), a saved index directory,
                             demo, a tool file (any supported format) or a directory of them
  --index-dir <dir>          Where saved libraries live (default indexes, env TOOLSEL_INDEX_DIR)
  --library-name <name>      Library name written into GRPO records: serve the library under it
                             (default: the suite name, or the library's base name)
  --teacher <model>          llm:openai:<model> (any OpenAI-compatible server, models.openai.baseUrl
                             or TOOLSEL_OPENAI_BASE_URL) or llm:onnx:<dir>: writes target plans
                             (kept only when every step retrieves a gold tool within K) and checks
                             each gold pair for synonymy
  --k <n>                    Candidates per step (default retrieve.k, 15)
  --tau <x>                  BM25 threshold (default retrieve.bm25.tau, 3)
  --max-steps <n>            Planner step cap in the prompt (default plan.maxSteps, 8)
  --valid-fraction <x>       Share of examples in *.valid.jsonl, by a hash of the id (default 0.05)
  --seed <n>                 Split seed (default 0)
  --limit <n>                Only the first n examples
  --concurrency <n>          Examples in flight (teacher calls), default 8
  --data <dir>               Benchmark data root (default bench.dataDir)
  --out <dir>                Output directory (default bench.outDir/train-data/<kind>-<source>)
${maxExamplesHelp(29)}
${maxFileBytesHelp(29)}

${COMMON_HELP}`

export const OPTIONS = {
  suite: { type: 'string' },
  split: { type: 'string' },
  examples: { type: 'string' },
  library: { type: 'string' },
  'index-dir': { type: 'string' },
  'library-name': { type: 'string' },
  teacher: { type: 'string' },
  k: { type: 'string' },
  tau: { type: 'string' },
  'max-steps': { type: 'string' },
  'valid-fraction': { type: 'string' },
  seed: { type: 'string' },
  limit: { type: 'string' },
  concurrency: { type: 'string' },
  data: { type: 'string' },
  out: { type: 'string' },
  'max-examples': { type: 'string' },
  'max-file-bytes': { type: 'string' },
} as const

/**
 * The help and the flags of `toolsel bench`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { SUITE_NAMES } from '../bench/suites/suite-names.ts'
import { RETRIEVER_KIND_NAMES } from '../store/kinds/kind-names.ts'
import { COMMON_HELP, wrapHelp, maxFileBytesHelp } from './command-help.ts'

export const HELP = `Usage: toolsel bench [--suite <name|all>] [options]

Runs Plan-Retrieve-Select over benchmark suites and scores the predicted tool sets against the
gold sets (exact match first). Writes report.json, summary.md and report.html to --out.

Suites: ${wrapHelp(['all', ...SUITE_NAMES].join(', '), 8, 8)}

Options:
  --suite <name|all>        Suite to run (default all); one without data is skipped, saying why;
                            file:<path>: your own queries, each with its own tools (JSON Lines of
                            {instruction, tools | library: <tool file or folder>, gold, category?};
                            records without either use --tools; a query whose gold is not among
                            its tools is dropped, and a file whose every query is dropped fails;
                            bench/README.md, "Your own set")
  --data <dir>              Benchmark data root (default bench.dataDir: ../shared/data, env
                            TOOLSEL_DATA_DIR)
  --queries <file>          Query file (or BEIR folder) instead of the suite's own; one suite only
  --tools <file>            Tool file instead of the suite's own library (ToolBench: the corpus,
                            implies --library-mode corpus); one suite only
  --library-mode <mode>     ToolBench library: closed (each query's api_list), union (default),
                            corpus
  --unmappable <drop|keep>  Queries whose gold names tools outside the library: drop (default) or
                            keep
  --library <file>          Evaluate against this tool library instead (library swap; missing
                            gold = misses)
  --examples <none|train|file:<path>>
                            train: each library gets usage examples from its suite's training split
                            (ToolBench G3: ToolPlanner train minus the test queries; ToolLens: its
                            train qrels; other suites: 5-fold by query, never from the evaluated
                            fold). file:<path>: your own training split (JSON Lines of
                            {instruction, tools, id?} over the library's ids; one suite only); an
                            example whose instruction is an evaluated query is dropped, and said so.
                            Default none
  --baseline oracle-count   BM25 whole-instruction top-|gold| oracle instead of the pipeline
  --planner <id>            rule | none | llm:<model> (default rule)
  --selector <id>           learned | learned:<model.json> | top1 | llm:<model> (default learned)
  --retriever <part>        auto | ${RETRIEVER_KIND_NAMES.join(' | ')}, or a part (dense:<embedder>,
                            hybrid:<part>+<part>) (default auto: the suite library's own, bm25;
                            the others index the suites with what they need)
  --k <n>                   Candidates per step (default 15)
  --tau <x>                 BM25 score threshold of the top1 and llm: selectors' candidates
                            (default 3); the learned selector (the default) takes every candidate
                            and decides itself
  --limit <n>               Only the first n queries of each split
  --name <name>             Run name (default: <timestamp>-<suite>)
  --out <dir>               Report directory (default bench.outDir/<name>)
  --query-timeout <ms>      Time limit per query; a query past it is a miss with error TIMEOUT
                            (default none)
  --concurrency <n>         Queries run at once, e.g. 16-64 for a vLLM server that batches
                            (default 1)
  --resume                  Continue the run in --out (or --name) after an interruption: queries
                            in its progress.jsonl are not run again; refused when the options
                            differ
  --compact                 Leave candidate lists out of report.json (for committed baselines)
  --json                    Print report.json to stdout instead of the summary
${maxFileBytesHelp(28)}

${COMMON_HELP}`

export const OPTIONS = {
  suite: { type: 'string' },
  data: { type: 'string' },
  queries: { type: 'string' },
  tools: { type: 'string' },
  'library-mode': { type: 'string' },
  unmappable: { type: 'string' },
  library: { type: 'string' },
  examples: { type: 'string' },
  baseline: { type: 'string' },
  planner: { type: 'string' },
  selector: { type: 'string' },
  retriever: { type: 'string' },
  k: { type: 'string' },
  tau: { type: 'string' },
  limit: { type: 'string' },
  name: { type: 'string' },
  out: { type: 'string' },
  compact: { type: 'boolean' },
  json: { type: 'boolean' },
  'query-timeout': { type: 'string' },
  concurrency: { type: 'string' },
  resume: { type: 'boolean' },
  'max-file-bytes': { type: 'string' },
} as const

/**
 * The help and the flags of `toolsel select`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { RETRIEVER_KIND_NAMES } from '../store/kinds/kind-names.ts'
import { COMMON_HELP, maxFileBytesHelp } from './command-help.ts'

export const HELP = `Usage: toolsel select "<instruction>" [--library <ref>] [--json] [options]
       toolsel select - [options]    (the instruction read from stdin)

Plans the instruction into steps, retrieves candidates per step and selects at most one tool per
step (the learned selector, the default, decides how many steps need a tool and which).

Options:
  --library <ref>      Index name, index dir, tool file or directory (default library.default, demo,
                       env TOOLSEL_LIBRARY)
  --index-dir <dir>    Where built indexes live (default indexes, env TOOLSEL_INDEX_DIR)
  --json               Print the answer as JSON, as POST /v1/select-tools gives it with
                       includeSchemas (the same as --tool-format toolsel): steps, candidates,
                       timings, and each tool's id, name, description, parameters, namespace
                       and MCP annotations
  --explain            Each candidate's probability (learned selector); with --json all its features
  --tool-format <f>    Print the result as JSON with the tools as a model API takes them:
                       openai (Chat Completions), openai-responses, anthropic, or toolsel;
                       toolIds maps each provider tool name back to its tool id
  --k <n>              Candidates per step (default 15)
  --tau <x>            Retrieval score threshold every step's candidates must pass, under any
                       selector (a request's tau). Default: 0 with the learned selector (the
                       default), BM25's retrieve.bm25.tau (3) under top1 and llm:
  --planner <id>       rule | none | llm:<model> (default rule)
  --selector <id>      learned | learned:<model.json> | top1 | llm:<model> (default learned)
  --retriever <part>   ${RETRIEVER_KIND_NAMES.join(' | ')} | auto, or a part the library has
                       (dense:<embedder>, hybrid:<part>+<part>) (default retrieve.retriever, auto:
                       the library's own default, env TOOLSEL_RETRIEVER). A tool file, and the
                       demo until it is saved (indexes/demo), are indexed with what the retriever
                       needs (the demo's kept for the next run in $XDG_CACHE_HOME/toolsel/indexes,
                       else ~/.cache/toolsel/indexes, for the 4 configs used last);
                       a saved index has the parts it was built with
  --embedder <id>      Embedder of dense and hybrid: the library's dense:<id> part (a tool file,
                       or the demo not saved, is embedded with it) (default use-lite, env
                       TOOLSEL_EMBEDDER)
  --device <device>    cpu or cuda, for onnx:<dir> embedders (default cpu, env TOOLSEL_DEVICE)
${maxFileBytesHelp(23)}

${COMMON_HELP}`

export const OPTIONS = {
  library: { type: 'string' },
  'index-dir': { type: 'string' },
  json: { type: 'boolean' },
  explain: { type: 'boolean' },
  'tool-format': { type: 'string' },
  k: { type: 'string' },
  tau: { type: 'string' },
  planner: { type: 'string' },
  selector: { type: 'string' },
  retriever: { type: 'string' },
  embedder: { type: 'string' },
  device: { type: 'string' },
  'max-file-bytes': { type: 'string' },
} as const

/**
 * The help and the flags of `toolsel index`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { IMPORT_FORMATS } from '../library/importers/import-formats.ts'
import { RETRIEVER_KIND_NAMES } from '../store/kinds/kind-names.ts'
import { EMBEDDING_MODEL_USAGE } from '../models/create-embedding-model.ts'
import { COMMON_HELP, wrapHelp, maxFileBytesHelp } from './command-help.ts'

export const HELP = `Usage: toolsel index <file|dir> [--name <library>] [--format <format>] [--retriever <parts>]
                     [--examples <file>] [--rebuild] [options]
       toolsel index - --name <library> [options]   (the tool file read from stdin)

Imports tools from a file (or every tool file in a directory, or stdin: -, bounded by
--max-file-bytes as a file) and builds the library's index in
<index-dir>/<library>/ (manifest, tools, BM25 index; with dense or hybrid also the tool vectors
and their embedding cache). The write is atomic: an existing index is replaced only once the new
one is complete. Rebuilding an index re-embeds only the tools that changed.

Options:
  --name <library>       Library name (default: the file name)
  --format <format>      ${wrapHelp(`One of: ${Object.keys(IMPORT_FORMATS).join(', ')} (default: detected)`, 25, 25)}
  --namespace <ns>       Namespace: ids become <ns>.<name> (default: the file name for MCP)
  --on-duplicate <mode>  Two records with one id: error (default), rename (the later one
                         becomes <id>_2; identical copies dropped), first or last (keep one)
  --provider-names <m>   OpenAI / Anthropic tools that toolsel wrote (toolsel select
                         --tool-format, toolFormat) are named by their ids in a code
                         (sms.send_sms is sms--send_sms): decode (default) reads such names back
                         as ids when the file shows it is toolsel's export (its toolIds, or every
                         name in the code); keep keeps them
  --index-dir <dir>      Where indexes live (default indexes, env TOOLSEL_INDEX_DIR)
  --retriever <parts>    bm25 (BM25 only), dense (+ embeddings), hybrid (+ embeddings and
                         their fusion with BM25) or regex (+ regex name lookups); kinds:
                         ${wrapHelp(`${RETRIEVER_KIND_NAMES.join(', ')}. A comma list builds several parts side by side, e.g. bm25,dense:use-lite,dense:static:glove-100d (dense:<embedder>: vectors of that embedder; hybrid:<part>+<part>: a fusion of named parts); the first is the library's default retriever (default retrieve.build: bm25, env TOOLSEL_BUILD_RETRIEVER)`, 25, 25)}
  --embedder <id>        ${wrapHelp(`${EMBEDDING_MODEL_USAGE.join(' | ')} (default use-lite, env TOOLSEL_EMBEDDER). Queries must use the same embedder: pass it to select/serve too.`, 25, 25)}
  --dense-index <kind>   hnsw (approximate, fast at any size) or flat (exact) (default hnsw)
  --device <device>      cpu or cuda, for onnx:<dir> embedders; cuda falls back to cpu with a
                         warning when unavailable (default cpu, env TOOLSEL_DEVICE)
  --examples <file>      Usage examples of the library, JSON Lines (or a JSON array) of
                         {"instruction": "...", "tools": ["<tool id>", ...]} (an "id" too, as
                         in toolsel train --examples files, is allowed and not kept); they replace
                         the index's current ones. Without it a rebuild keeps the current examples
                         (minus tool ids the new tools lack). Unknown tool ids are refused.
${maxFileBytesHelp(25, ', nothing written')}
  --rebuild              Build and write even when the saved index already holds these tools
                         (same tools, source file and format, retriever parts, examples, and each
                         part built with the same settings): such a run otherwise changes nothing
                         ("Unchanged: ..."). A change of a build setting (--embedder, --dense-index,
                         retrieve.bm25 or HNSW settings) rebuilds without it.

Import warnings (a skipped server tool, say) are "Warning: ..." lines on stderr.

Examples:
  toolsel index tools.json --name mytools
  toolsel index tools.json --name mytools --retriever bm25,dense:use-lite
  toolsel index src/library/demo/servers --name demo --retriever bm25,regex

${COMMON_HELP}`

export const OPTIONS = {
  name: { type: 'string' },
  format: { type: 'string' },
  namespace: { type: 'string' },
  'on-duplicate': { type: 'string' },
  'provider-names': { type: 'string' },
  'index-dir': { type: 'string' },
  retriever: { type: 'string' },
  embedder: { type: 'string' },
  'dense-index': { type: 'string' },
  device: { type: 'string' },
  examples: { type: 'string' },
  rebuild: { type: 'boolean' },
  'max-file-bytes': { type: 'string' },
} as const

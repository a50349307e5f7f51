/**
 * The help and the flags of `toolsel models`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import type { OnnxDtype } from '../models/onnx/onnx-embedding-model.ts'
import { COMMON_HELP } from './command-help.ts'

/** The weight files (onnx/model_<dtype>.onnx) --dtype names. */
export const DTYPES: readonly OnnxDtype[] = [
  'fp32',
  'fp16',
  'q8',
  'int8',
  'uint8',
  'q4',
  'q4f16',
  'bnb4',
]

export const HELP = `Usage: toolsel models check <model dir> [--dtype <dtype>] [--no-cuda] [--json]
       toolsel models check openai:<model> [--chat] [--json]

Checks a causal-LM directory in the transformers.js layout (config.json, tokenizer.json,
tokenizer_config.json with a chat template, onnx/model*.onnx): which weight files (dtypes) are
present, the ONNX inputs and outputs and what they mean for toolsel, and which execution
providers can run it here (CPU, and CUDA when a session really starts). Exits 1 when the
directory would not load, listing each problem with its fix; exits 2 with one error line when
the path is not a directory. See models/README.md.

With openai:<model> (or llm:openai:<model>) it sends the request toolsel serve checks the API
key with: GET <models.openai.baseUrl>/models with models.openai.apiKey (env
TOOLSEL_OPENAI_BASE_URL, TOOLSEL_OPENAI_API_KEY), at most min(models.openai.timeoutMs, 5 s).
Exits 0 when the endpoint accepts the key and lists the model; 1 when it refuses the key
(401/403), is unreachable (also: its model list is still arriving when the time is up, or breaks
off: result unreachable with its status), answers another status, or lists models but not this
one (a chat call would answer 404); 1 too when /models answers 404 or 405 (not served: nothing
was checked, and the message says to run again with --chat), when its 2xx answer is over 1 MiB
(too-large: not read, the model not checked) or is no OpenAI model list (not-a-list: its start
is quoted; a web page there suggests a base URL that is not the API root); 2 when no
base URL is set, it is not an http(s) URL without user info, or the argument names no model
(openai: alone).

--chat then sends one chat completion (it costs a few tokens: two short tool descriptions in, at
most ~40 tokens out): the choice call toolsel's selector makes, built from models.openai as serve
builds it (choiceMode, sendThinkingSwitch, timeoutMs, maxRetries), over two fixed candidates. It
says "Chat: ok", or "Chat: failed" with the error code, HTTP status and message (a server that
lists the model but refuses the call's response_format or chat_template_kwargs, or answers
outside the choices); a failure exits 1. It is sent too when /models answers another status,
and where /models is merely absent (404 or 405, as on some vLLM or llama.cpp servers), too large
or no model list, the chat alone decides the exit code. It is skipped (no call) when the key is
refused, the endpoint is unreachable, or it lists models but not this one.

Options:
  --dtype <dtype>      Weight file to inspect (default fp32 when present):
                       ${DTYPES.join(' | ')}
  --no-cuda            Don't try to start a CUDA session
  --chat               openai:<model> only: also send one choice call (a few tokens)
  --json               Print the report as JSON

${COMMON_HELP}`

export const OPTIONS = {
  dtype: { type: 'string' },
  'no-cuda': { type: 'boolean' },
  json: { type: 'boolean' },
  chat: { type: 'boolean' },
} as const

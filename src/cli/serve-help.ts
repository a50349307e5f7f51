/**
 * The help and the flags of `toolsel serve`, apart from the command's module: main.ts
 * prints the help without loading what the command runs (bench/README.md, "CLI start cost",
 * round 49). Only constants and light modules here.
 * @module
 */
import { COMMON_HELP, maxFileBytesHelp } from './command-help.ts'

export const HELP = `Usage: toolsel serve [--port <n>] [--host <addr>] [--library <name|file|dir>] [--index-dir <dir>]
                     [--workers <n>] [--gateway-config <f>] [options]

Starts the HTTP service (POST /v1/select-tools, /v1/search-tools, /v1/libraries…, /openapi.json)
and the MCP endpoint at /mcp.
With no options it serves the embedded demo library on port 8080.

Options:
  --port <n>             TCP port (default 8080, env TOOLSEL_PORT)
  --host <addr>          Interface (default 127.0.0.1, env TOOLSEL_HOST); any other address needs
                         an admin key (env TOOLSEL_ADMIN_KEY) or --insecure-no-auth
  --insecure-no-auth     Serve without API keys on a non-loopback address: anyone who reaches
                         the port can replace libraries (env TOOLSEL_INSECURE_NO_AUTH)
  --library <ref>        Default library: a built index name, an index dir, a tool file or a
                         directory of tool files (default demo, env TOOLSEL_LIBRARY)
  --index-dir <dir>      Where built indexes live (default indexes, env TOOLSEL_INDEX_DIR)
  --planner <id>         Default planner: rule, none, llm:onnx:<dir>, llm:openai:<model>
                         (default rule, env TOOLSEL_PLANNER); models load before /readyz is ready
  --selector <id>        Default selector: learned, learned:<model.json>, top1, llm:onnx:<dir>,
                         llm:openai:<model> (default learned, env TOOLSEL_SELECTOR);
                         when a planner, selector or fallback is llm:openai:, the API key is
                         checked before ready (GET <baseUrl>/models): a 401 or 403 stops the start
  --workers <n>          Server processes sharing the port, 0 = one per core (default 1, env
                         TOOLSEL_WORKERS); a library change through one reaches all before it
                         is answered
  --gateway-config <f>   Upstream MCP servers to aggregate (a "gateway" config section or an
                         {"mcpServers": …} client config file); see docs/mcp.md
${maxFileBytesHelp(25)}

${COMMON_HELP}

Stopping: SIGTERM, SIGINT (Ctrl-C) or SIGHUP (the terminal closed) answers the requests in
flight, then exits (within server.shutdownGraceMs). A library write (upload, usage examples,
delete, snapshot) still under way then is abandoned, its library left as it was, within one
more grace period (at least 2 s; "Stopped" counts it: writesUnfinished; exit 1 if it still
ran, or with --workers N if a worker was killed meanwhile). Started by npm, pnpm or yarn
("start": "toolsel serve"), it stops when the package manager is stopped; a script that runs
it through a file of yours needs
"exec toolsel serve" in the file and "exec ./run.sh" in the script.
To outlive the terminal: setsid toolsel serve > serve.log 2>&1 &   (nohup does not: Node
undoes it). Under a supervisor run node bin/toolsel.mjs serve, not npm (README: Operations).`

export const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  library: { type: 'string' },
  'index-dir': { type: 'string' },
  'gateway-config': { type: 'string' },
  planner: { type: 'string' },
  selector: { type: 'string' },
  'insecure-no-auth': { type: 'boolean' },
  workers: { type: 'string' },
  'max-file-bytes': { type: 'string' },
} as const

/**
 * The body of `POST /v1/libraries/:library/examples`, in a module of its own: the route's large
 * bodies are parsed and checked on a worker thread (examples-body.ts), which loads this and not
 * every request schema.
 * @module
 */
import { z } from 'zod'
import { UsageExampleSchema } from '../examples/usage-example.ts'

/** Most usage examples one request may add. */
export const MAX_EXAMPLES_PER_REQUEST = 10_000

/** `{examples: [{instruction, tools}, …]}`; `maxExamples` (library.maxExamples) is only told. */
export function addExamplesSchema(maxExamples: number) {
  return z
    .object(
      {
        examples: z
          .array(UsageExampleSchema)
          .min(1)
          .max(MAX_EXAMPLES_PER_REQUEST)
          .describe(
            `Usage examples to add, 1-${MAX_EXAMPLES_PER_REQUEST}: {instruction, tools: [tool ids]}. Unknown tool ids are refused (400 naming them); duplicates (same instruction ignoring case and spacing, same tools) are skipped; beyond library.maxExamples (${maxExamples}) the oldest are dropped.`,
          ),
      },
      {
        // A bare array (the records of an examples file, as `toolsel index --examples` takes)
        // is the likely mistake: say what to wrap it in.
        error: (issue) =>
          Array.isArray(issue.input)
            ? 'send the examples as {"examples": [{"instruction": "…", "tools": ["<tool id>", …]}, …]}, not a bare array'
            : undefined,
      },
    )
    .strict()
}

/**
 * A user's own training examples: JSON Lines (or a JSON array) of `{instruction, tools: [ids]}`
 * over a tool library (its tools, read by the caller from the `--library` reference). Nothing is excluded (the user owns the
 * split); examples naming a tool the library lacks are dropped and counted.
 * @module
 */
import { z } from 'zod'
import { jsonRecords, readDataText } from '../../bench/suites/read-data-file.ts'
import { ToolselError } from '../../errors.ts'
import type { Tool } from '../../library/tool.ts'
import type { TrainExample, TrainSplit } from '../train-split.ts'

const ExampleSchema = z.object({
  id: z.union([z.string(), z.number()]).optional(),
  instruction: z.string().trim().min(1),
  tools: z.array(z.string().min(1)).min(1),
})

export async function loadExamplesFile(
  file: string,
  library: { reference: string; tools: readonly Tool[] },
): Promise<TrainSplit> {
  const { reference: libraryFile } = library
  const tools = [...library.tools]
  const ids = new Set(tools.map((tool) => tool.id))
  // A file of one example is JSON Lines too (was: "must be JSON Lines (or a JSON array)").
  const records = jsonRecords(
    await readDataText(file, 'Examples file'),
    file,
    'Examples file',
    '{"instruction": "…", "tools": ["<tool id>", …]}',
  )
  const examples: TrainExample[] = []
  let unmappable = 0
  let firstUnknown: string | undefined
  for (const [position, record] of records.entries()) {
    const parsed = ExampleSchema.safeParse(record)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      throw new ToolselError(
        'INVALID_INPUT',
        `Examples file "${file}" record ${position + 1}: field "${issue.path.join('.')}": ${issue.message}. Expected {"instruction": "…", "tools": ["<tool id>", …]}.`,
      )
    }
    const gold = [...new Set(parsed.data.tools)]
    const unknown = gold.find((id) => !ids.has(id))
    if (unknown !== undefined) {
      unmappable += 1
      firstUnknown ??= `record ${position + 1}: "${unknown}"`
      continue
    }
    const id = parsed.data.id === undefined ? String(position + 1) : String(parsed.data.id)
    examples.push({ id, instruction: parsed.data.instruction, gold })
  }
  if (examples.length === 0) {
    throw new ToolselError(
      'INVALID_INPUT',
      `No example of "${file}" names only tools of "${libraryFile}" (${unmappable} name unknown tools, first: ${firstUnknown}); tool ids must match the library's.`,
    )
  }
  return {
    name: `examples:${file}`,
    files: [file, libraryFile],
    tools,
    examples,
    records: records.length,
    exclusions: { testFiles: [], byId: 0, byText: 0, unmappable, empty: 0 },
    notes: [
      'a user examples file: gold = its tools; nothing excluded',
      // Which one, so a typo in an id is found without reading the whole file.
      ...(firstUnknown === undefined
        ? []
        : [
            `${unmappable} example(s) name a tool id that is not in the library and are left out (first: ${firstUnknown})`,
          ]),
    ],
  }
}

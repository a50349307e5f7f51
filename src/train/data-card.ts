/**
 * The data card written next to the records: where they came from, what was excluded and
 * filtered (with counts), the retrieval settings and prompt fingerprints they were made with, and
 * how many records each file holds. Everything in it is deterministic (no dates), so two runs
 * over the same data give byte-equal output.
 * @module
 */
import { createHash } from 'node:crypto'
import packageJson from '../../package.json' with { type: 'json' }
import type { ChatMessage } from '../models/language-model.ts'
import { buildPlanMessages } from '../plan/prompts.ts'
import { selectionPrompt } from '../select/llm-selector.ts'
import type { TrainDataCounts, TrainDataKind } from './build-train-data.ts'
import type { TrainSplit } from './train-split.ts'

export interface DataCard {
  kind: TrainDataKind
  toolsel: string
  source: {
    name: string
    files: string[]
    records: number
    examples: number
    notes: string[]
  }
  excluded: TrainSplit['exclusions']
  library: { name: string; tools: number; contentHash: string }
  retrieval: { retriever: string; reranker: string; k: number; tau: number }
  prompts: { maxSteps: number; plannerSha256: string; selectorSha256: string }
  teacher: string | null
  split: { seed: number; validFraction: number }
  counts: TrainDataCounts
  files: Record<string, number>
}

/**
 * Fingerprints of the prompt templates: a model trained on these records expects a toolsel whose
 * fingerprints are the same (`toolsel train-data` prints them; docs/training.md says how to check).
 */
export function promptFingerprints(maxSteps: number): { planner: string; selector: string } {
  const hash = (messages: ChatMessage[]) =>
    createHash('sha256').update(JSON.stringify(messages)).digest('hex')
  const selector = selectionPrompt({
    step: '{step}',
    candidates: [{ id: '{id}', name: '{name}', description: '{description}', score: 0 }],
  })
  return {
    planner: hash(buildPlanMessages('{instruction}', maxSteps)),
    selector: hash(selector.messages),
  }
}

export function createDataCard(input: Omit<DataCard, 'toolsel'>): DataCard {
  return { ...input, toolsel: packageJson.version }
}

export function renderDataCard(card: DataCard): string {
  const { counts } = card
  const lines = [
    `# Training data card: ${card.kind} records from ${card.source.name}`,
    '',
    `Written by \`toolsel train-data ${card.kind}\` (toolsel ${card.toolsel}). Records are chat-format JSON Lines`,
    'with the exact prompts toolsel sends at inference; see docs/training.md.',
    '',
    '## Source',
    '',
    ...card.source.files.map((file) => `- \`${file}\``),
    ...card.source.notes.map((note) => `- ${note}`),
    `- ${card.source.records} records read, ${card.source.examples} examples kept after exclusions`,
    '',
    '## Excluded before anything else',
    '',
    card.excluded.testFiles.length > 0
      ? `Every query of these benchmark test files, by id and by text:\n\n${card.excluded.testFiles.map((file) => `- \`${file}\``).join('\n')}\n`
      : 'No test files (a user examples file).\n',
    '| reason | examples |',
    '|---|---:|',
    `| query id is a test query id | ${card.excluded.byId} |`,
    `| query text is a test query's text | ${card.excluded.byText} |`,
    `| gold names a tool outside the library | ${card.excluded.unmappable} |`,
    `| no text or no gold | ${card.excluded.empty} |`,
    '',
    '## Filters',
    '',
    '| filter | examples in | gold tools removed | examples dropped |',
    '|---|---:|---:|---:|',
    `| lexical (gold shares no content word with the instruction) | ${counts.lexicalFilter.examplesIn} | ${counts.lexicalFilter.goldRemoved} | ${counts.lexicalFilter.examplesDropped} |`,
    counts.synonymFilter
      ? `| teacher synonymy check (${counts.synonymFilter.pairsAsked} pairs asked, ${counts.synonymFilter.failed} calls failed and kept) | ${counts.synonymFilter.examplesIn} | ${counts.synonymFilter.goldRemoved} | ${counts.synonymFilter.examplesDropped} |`
      : '| teacher synonymy check | – | – | not run (no teacher) |',
    '',
    // Each kind reports the counts it made (was: "0 checked" on a GRPO card, "Selector steps: 0"
    // on a planner card, read as everything rejected).
    card.kind === 'grpo'
      ? 'Target plans: none (GRPO prompt sets carry no target; the rewards score the rollouts).'
      : `Target plans (${counts.plans.source}): ${counts.plans.checked} checked, ${counts.plans.rejected} rejected because some step claims no gold tool within K` +
        (counts.plans.source === 'teacher'
          ? `; ${counts.plans.teacherUnparsable} teacher answers held no plan, ${counts.plans.teacherFailed} teacher calls failed.`
          : '.'),
    '',
    card.kind === 'planner'
      ? 'Selector steps: not counted (planner records only; `toolsel train-data selector` or `grpo` writes them).'
      : `Selector steps: ${counts.selectorSteps.goldRetrieved} with the gold tool among the candidates, ${counts.selectorSteps.goldNotRetrieved} without (target \`none\`, \`goldRetrieved: false\`), ${counts.selectorSteps.noCandidates} with no candidate (no record: the pipeline never asks the selector).`,
    '',
    '## Settings the model must be served with',
    '',
    `- library \`${card.library.name}\`: ${card.library.tools} tools, content hash \`${card.library.contentHash}\``,
    `- retriever \`${card.retrieval.retriever}\`, reranker \`${card.retrieval.reranker}\`, k = ${card.retrieval.k}, tau = ${card.retrieval.tau}`,
    `- plan.maxSteps = ${card.prompts.maxSteps}`,
    `- planner prompt sha256 \`${card.prompts.plannerSha256}\``,
    `- selector prompt sha256 \`${card.prompts.selectorSha256}\``,
    `- teacher: ${card.teacher ?? 'none (targets written from tool descriptions)'}`,
    `- split: seed ${card.split.seed}, validation fraction ${card.split.validFraction} (by a hash of the example id)`,
    '',
    '## Files',
    '',
    '| file | records |',
    '|---|---:|',
    ...Object.entries(card.files).map(([file, count]) => `| \`${file}\` | ${count} |`),
    '',
  ]
  return lines.join('\n')
}

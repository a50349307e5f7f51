/**
 * `npm run bench:onnx`: prints what our code costs on CPU around the model itself. The tiny
 * Qwen3 test fixtures compute almost nothing, so these times are the decoding loop, tensor
 * plumbing, log-softmax over Qwen3's 151,936-token vocabulary, tokenizer and chat template.
 * (A measurement, not a test: it used to be a unit test and timed out on loaded machines.)
 */
import type { CandidateTool } from '../src/contracts.ts'
import { benchArgs } from './bench-args.ts'

benchArgs(import.meta.url, { options: {} })
// What it measures only once the flags are good: --help and a bad flag answer without it.
const { tokenLogProbs } = await import('../src/models/onnx/causal-lm-log-probs.ts')
const { CausalLmRuntime } = await import('../src/models/onnx/causal-lm-runtime.ts')
const { OnnxLanguageModel } = await import('../src/models/onnx/onnx-language-model.ts')
const { buildPlanMessages } = await import('../src/plan/prompts.ts')
const { buildSelectMessages } = await import('../src/select/prompts.ts')
const { TINY_MODELS_MISSING, tinyModel } = await import('../test/models/language/tiny-models.ts')

const RUNS = 7

async function median(run: () => Promise<unknown>): Promise<number> {
  await run()
  const times: number[] = []
  for (let index = 0; index < RUNS; index++) {
    const started = performance.now()
    await run()
    times.push(performance.now() - started)
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]
}

const CANDIDATES: CandidateTool[] = Array.from({ length: 15 }, (_, index) => ({
  id: index === 7 ? 'weather.get_forecast' : `tool_${index}.action_${index}`,
  name: `Tool ${index}`,
  description: `Does thing number ${index} for the user, given a few parameters and an API key.`,
  score: 10 - index / 2,
}))

async function main(): Promise<void> {
  if (TINY_MODELS_MISSING) throw new Error(TINY_MODELS_MISSING)
  {
    const model = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-garbage'))
    const plan = buildPlanMessages(
      'Get the weather forecast for Paris tomorrow and email it to Ann.',
      8,
    )
    const one = await median(() => model.generate(plan, { maxTokens: 1 }))
    const hundred = await median(() => model.generate(plan, { maxTokens: 101 }))
    const perToken = (hundred - one) / 100

    const selector = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'))
    const messages = buildSelectMessages(
      'get the weather forecast for Paris tomorrow',
      CANDIDATES,
      'none',
    )
    const choices = [...CANDIDATES.map((candidate) => candidate.id), 'none']
    const { usage } = await selector.scoreChoices(messages, choices)
    const score = await median(() => selector.scoreChoices(messages, choices))
    OnnxLanguageModel.clearCache()
    const unbatched = await OnnxLanguageModel.load(tinyModel('tiny-qwen3-selector'), {
      scoreBatchSize: 1,
    })
    const scoreOneByOne = await median(() => unbatched.scoreChoices(messages, choices))
    OnnxLanguageModel.clearCache()

    // Where the batched time goes: our code versus the fixture's forward pass, whose cost is
    // mostly writing 151,936 logits per position (16 rows x ~9 positions = 87 MB of float32).
    const runtime = await CausalLmRuntime.load(tinyModel('tiny-qwen3-selector'), 'fp32', 'cpu')
    const promptIds = runtime.encode(runtime.chatPrompt(messages, false))
    const template = await median(async () => runtime.encode(runtime.chatPrompt(messages, false)))
    const prompt = await runtime.forward({
      inputIds: [promptIds],
      attentionMask: [promptIds.map(() => 1)],
      keepLast: 1,
    })
    const feeds = choices.map((choice) => runtime.encode(choice))
    const width = Math.max(...feeds.map((feed) => feed.length))
    const padded = feeds.map((feed) => [
      ...feed,
      ...new Array<number>(width - feed.length).fill(runtime.padTokenId),
    ])
    const mask = feeds.map((feed) => [
      ...promptIds.map(() => 1),
      ...padded[0].map((_, index) => (index < feed.length ? 1 : 0)),
    ])
    let last = prompt
    const forward = await median(async () => {
      last = await runtime.forward({
        inputIds: padded,
        attentionMask: mask,
        past: runtime.tileCache(prompt.past, choices.length),
        keepLast: width,
      })
    })
    const logProbs = await median(() =>
      tokenLogProbs(last.logits, new Array<number>(choices.length * width).fill(0)),
    )
    await runtime.dispose()

    process.stdout.write(
      [
        `generate: prompt pass + first token ${one.toFixed(1)} ms (${plan.length} messages), ${perToken.toFixed(2)} ms per further token`,
        `scoreChoices, 16 choices, prompt ${usage.inputTokens} tokens fed: ${score.toFixed(1)} ms batched, ${scoreOneByOne.toFixed(1)} ms one choice per pass`,
        `  of which: template + tokenize ${template.toFixed(1)} ms, batched forward (${choices.length}x${width} positions, fixture) ${forward.toFixed(1)} ms, log-softmax ${logProbs.toFixed(1)} ms`,
      ].join('\n') + '\n',
    )
  }
}

await main()

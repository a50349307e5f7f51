/**
 * Every Planner, Reranker, Selector and LanguageModel implementation runs its shared suite
 * (retrievers: test/retrieve/retriever.contract.ts; embedders: test/models/embedding-model.contract.ts).
 */
import { afterAll, beforeAll } from 'vitest'
import type { LanguageModel } from '../../src/models/language-model.ts'
import { OnnxLanguageModel } from '../../src/models/onnx/onnx-language-model.ts'
import { OpenAiLanguageModel } from '../../src/models/openai/openai-language-model.ts'
import { LlmPlanner } from '../../src/plan/llm-planner.ts'
import { NonePlanner } from '../../src/plan/none-planner.ts'
import { RulePlanner } from '../../src/plan/rule-planner.ts'
import { IdentityReranker } from '../../src/rerank/identity-reranker.ts'
import { loadDefaultModel } from '../../src/learn/learned-model.ts'
import { LearnedSelector } from '../../src/select/learned-selector.ts'
import { LlmSelector } from '../../src/select/llm-selector.ts'
import { Top1Selector } from '../../src/select/top1-selector.ts'
import { TINY_MODELS_MISSING, tinyModel } from '../models/language/tiny-models.ts'
import {
  completion,
  startFakeChatServer,
  type FakeChatServer,
} from '../models/openai/fake-chat-server.ts'
import {
  runLanguageModelContract,
  runPlannerContract,
  runRerankerContract,
  runSelectorContract,
} from './stage-contracts.ts'

// One loaded copy per tiny model: loading is the slow part, and models are stateless.
const onnx = new Map<string, Promise<LanguageModel>>()
const tiny = (name: Parameters<typeof tinyModel>[0]) => {
  if (!onnx.has(name)) onnx.set(name, OnnxLanguageModel.load(tinyModel(name)))
  return onnx.get(name)!
}

// An OpenAI-compatible server that answers the first allowed choice, or a fixed plan.
let server: FakeChatServer | undefined
beforeAll(async () => {
  server = await startFakeChatServer()
})
afterAll(() => server?.close())
function openai(): LanguageModel {
  const fake = server!
  fake.reply(...Array.from({ length: 64 }, () => reply))
  return new OpenAiLanguageModel('qwen3-fake', { baseUrl: fake.baseUrl, retryDelayMs: 5 })
}
function reply(request: { body: Record<string, unknown> }) {
  const format = request.body.response_format as
    { json_schema?: { schema?: { properties?: { answer?: { enum?: string[] } } } } } | undefined
  const allowed = format?.json_schema?.schema?.properties?.answer?.enum
  return {
    body: completion(
      allowed
        ? JSON.stringify({ answer: allowed[0] })
        : '["get the weather forecast for Paris", "email the forecast to Ann"]',
    ),
  }
}

runPlannerContract({ name: 'RulePlanner', create: async () => new RulePlanner(), maxSteps: 8 })
runPlannerContract({ name: 'NonePlanner', create: async () => new NonePlanner() })
runPlannerContract({
  name: 'LlmPlanner (onnx: tiny Qwen3 planner)',
  skip: TINY_MODELS_MISSING,
  create: async () => new LlmPlanner({ model: await tiny('tiny-qwen3-planner'), maxSteps: 8 }),
  maxSteps: 8,
})
runPlannerContract({
  name: 'LlmPlanner (openai: fake chat-completions server)',
  create: async () => new LlmPlanner({ model: openai(), maxSteps: 8 }),
  maxSteps: 8,
})

runRerankerContract({ name: 'IdentityReranker', create: async () => new IdentityReranker() })

runSelectorContract({ name: 'Top1Selector', create: async () => new Top1Selector() })
runSelectorContract({
  name: 'LearnedSelector (the shipped model)',
  create: async () => new LearnedSelector(loadDefaultModel()),
})
runSelectorContract({
  name: 'LlmSelector (onnx: tiny Qwen3 selector)',
  skip: TINY_MODELS_MISSING,
  create: async () => new LlmSelector({ model: await tiny('tiny-qwen3-selector') }),
})
runSelectorContract({
  name: 'LlmSelector (openai: fake chat-completions server)',
  create: async () => new LlmSelector({ model: openai() }),
})

runLanguageModelContract({
  name: 'OnnxLanguageModel (tiny Qwen3 planner)',
  skip: TINY_MODELS_MISSING,
  create: () => tiny('tiny-qwen3-planner'),
})
runLanguageModelContract({
  name: 'OpenAiLanguageModel (fake chat-completions server)',
  create: async () => openai(),
})

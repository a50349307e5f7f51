/**
 * Choice scores from one greedy (temperature 0), unconstrained answer with `logprobs` and
 * `top_logprobs`, for servers without guided decoding. Each choice follows the generated tokens
 * while they spell a prefix of it. Where it leaves them it takes the best alternative token at
 * that position that continues it, and counts what comes after as certain (log 0): an upper
 * bound, which is what ranking needs. Where nothing listed continues it, it gets a bound for an
 * unlisted token: the lowest listed log-probability, and never more than log 0.5, because under
 * greedy decoding a token that was not picked has probability <= min(p_max, 1 - p_max) <= 0.5.
 * The answer itself scores its exact log-probability; every choice gets a finite score, so the
 * best-scored choice is always a listed one, whatever the model wrote.
 * @module
 */
import type { TokenLogprob } from './chat-completion-schema.ts'

const LOG_HALF = Math.log(0.5)

export function scoreFromLogprobs(
  tokens: readonly TokenLogprob[],
  choices: readonly string[],
): number[] {
  return choices.map((choice) => scoreOne(tokens, choice))
}

function scoreOne(tokens: readonly TokenLogprob[], choice: string): number {
  let spelled = ''
  let score = 0
  for (const token of tokens) {
    // Leading whitespace is formatting, not part of the answer (" weather" spells "weather").
    const next = (spelled + token.token).trimStart()
    if (spelled === choice) {
      // The choice is complete but the model went on writing, so ending here was not the argmax.
      // (End-of-turn may itself be listed, under a server-specific name, so the list is no bound.)
      return score + Math.min(token.logprob, LOG_HALF)
    }
    if (choice.startsWith(next)) {
      score += token.logprob
      spelled = next
      continue
    }
    const alternatives = (token.top_logprobs ?? []).filter((alternative) => {
      const candidate = (spelled + alternative.token).trimStart()
      return candidate.length > spelled.length && choice.startsWith(candidate)
    })
    // A loop, not Math.max(...): `top_logprobs` is as long as the server made it.
    let best = -Infinity
    for (const alternative of alternatives) best = Math.max(best, alternative.logprob)
    return score + (alternatives.length > 0 ? best : floor(token))
  }
  // The answer stopped short of the choice: continuing it lost to end-of-turn (the argmax).
  return spelled === choice ? score : score + LOG_HALF
}

/** An upper bound for a token that is not in the position's top list. */
function floor(token: TokenLogprob): number {
  const listed = (token.top_logprobs ?? []).map((alternative) => alternative.logprob)
  return Math.min(token.logprob, LOG_HALF, ...listed)
}

/**
 * Lexical cues the rule planner uses to tell requests from context. Kept apart from the planner so
 * the word lists can grow without touching the splitting logic.
 * @module
 */

/** Verbs that open an imperative request ("send …", "find …"), base forms. */
export const ACTION_VERBS: ReadonlySet<string> = new Set(
  `add analyze analyse append apply archive arrange ask assign attach book browse buy calculate call
  cancel change charge check classify clean clear close collect combine compare compile compute
  configure confirm convert copy count create debug decode delete deploy describe detect determine
  develop discover download draft edit email enable encode estimate evaluate explain export extract
  fetch figure file fill filter find fix follow forward generate get give grab help identify import
  inform invite issue list load locate log look make map mark measure merge message monitor move
  notify obtain open order organize organise pay ping play plot post predict prepare print provide
  publish pull purchase push put query rank read recommend record reduce refresh register reject
  remind remove rename render reorder repeat reply report request reschedule reserve reset resize
  resolve restart retrieve return review run save scan schedule search select sell send set share
  show shorten sign simplify solve sort speak split start stop store stream submit suggest summarize
  summarise sync take tell test text track transcribe transfer translate tweet turn unsubscribe update
  upload validate verify visualize watch write`.split(/\s+/),
)

/**
 * Round 47: the verbs that open at least 7 sentences of the training splits' instructions but are
 * not in ACTION_VERBS (`bench/verb-census.ts --by-start`: "Conduct …", "Investigate …", "Use the X
 * API to …"), less those that qualify the request before them ("include …", "limit the results to
 * …", "display them …", "ensure …", "consider …") and invitations ("Join us …"). The serving
 * planner reads them as actions (`RulePlannerOptions.censusVerbs`); the training planner, the
 * step floor and the `action` feature do not, so the shipped model is unchanged.
 */
export const CENSUS_VERBS: ReadonlySet<string> = new Set(
  `assess assist carry conduct coordinate design explore gather initiate investigate keep optimize
  perform promote use`.split(/\s+/),
)

/** Openers of questions and indirect requests. */
const REQUEST_OPENERS =
  /^(?:what|what's|whats|which|who|whom|whose|where|when|why|how|is|are|was|were|do|does|did|can|could|would|will|should|shall|may|might|is there|are there|please|kindly|i\s+(?:would|'d)\s+like|i\s+(?:want|need|wish|must|have to|am looking|'m looking)|i'd\s+love|help\s+me|let\s+me\s+know|tell\s+me|give\s+me|show\s+me|we\s+(?:want|need|would like))\b/iu

/** Requests phrased mid-sentence ("…, could you …", "… I need …"). */
const EMBEDDED_REQUEST =
  /\b(?:can you|could you|would you|will you|please|i (?:want|need|would like)|i'd like|help me|let me know|tell me|give me|show me|find me|get me)\b/iu

function firstWord(text: string): string {
  const match = /[\p{L}']+/u.exec(text.trim().toLowerCase())
  return match ? match[0] : ''
}

/**
 * True when the clause starts with an action verb or a request opener (with `censusVerbs`, also
 * one of CENSUS_VERBS).
 */
export function startsWithAction(clause: string, censusVerbs = false): boolean {
  const trimmed = clause
    .trim()
    .replace(
      /^(?:(?:please|kindly|also|then|and|so|plus|finally|lastly|next|first|additionally|after that|afterwards)\b[\s,]*)+/iu,
      '',
    )
  const word = firstWord(trimmed)
  return (
    ACTION_VERBS.has(word) ||
    (censusVerbs && CENSUS_VERBS.has(word)) ||
    REQUEST_OPENERS.test(trimmed)
  )
}

/**
 * True when a sentence asks for something; false for pure context ("I'm planning a trip.").
 * `censusVerbs`: as startsWithAction's.
 */
export function isRequest(sentence: string, censusVerbs = false): boolean {
  const trimmed = sentence.trim()
  if (trimmed.length === 0) return false
  if (trimmed.endsWith('?')) return true
  return startsWithAction(trimmed, censusVerbs) || EMBEDDED_REQUEST.test(trimmed)
}

/**
 * Words that mark a clause as a statement (a subject, an auxiliary or a verb of wanting): "I'm a
 * football fan", "my flight is UA 1234", "it needs to be cheap". A clause without any is a noun
 * phrase ("weather in Paris", "the stock price of Nvidia").
 */
const STATEMENT_CUE =
  /(?:^|[^\p{L}'’])(?:i|you|he|she|we|they|it|this|these|those|there|who|which|that|let|is|are|am|was|were|be|being|been|has|have|had|do|does|did|will|would|can|could|should|shall|may|might|must|need|needs|want|wants|wanna|like|love|hope|think)(?!\p{L})|n['’]t(?!\p{L})/iu

/**
 * First words of a clause that sets a scene rather than names a thing: prepositions and
 * subordinators ("As a fan, …", "For my trip …", "If it rains …") and greetings ("Hi",
 * "thanks").
 */
const SCENE_OPENER =
  /^(?:as|for|in|on|at|with|without|since|because|if|when|whenever|while|after|before|to|from|during|given|regarding|about|by|of|although|though|unless|once|until|like|hi|hello|hey|dear|thanks|thank|sorry|ok|okay|well|yes|no|oh|so|but|or|just)(?![\p{L}'’])/iu

/** Fewest and most words of a noun-phrase clause (`namesAThing`). */
const THING_WORDS = [2, 8] as const

/**
 * True for a short clause that names what the user wants without a verb ("weather in Paris",
 * "directions to the airport"): THING_WORDS words, the first opening with a letter (not "(AAPL)"),
 * no subject, auxiliary or verb of wanting, and not opened by a preposition, subordinator or
 * greeting.
 */
export function namesAThing(clause: string): boolean {
  const trimmed = clause.trim()
  const words = trimmed.split(/\s+/u).length
  if (!/^\p{L}/u.test(trimmed) || words < THING_WORDS[0] || words > THING_WORDS[1]) return false
  return !SCENE_OPENER.test(trimmed) && !STATEMENT_CUE.test(trimmed)
}

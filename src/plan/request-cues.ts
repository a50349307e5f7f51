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

/** True when the clause starts with an action verb or a request opener. */
export function startsWithAction(clause: string): boolean {
  const trimmed = clause
    .trim()
    .replace(
      /^(?:(?:please|kindly|also|then|and|so|plus|finally|lastly|next|first|additionally|after that|afterwards)\b[\s,]*)+/iu,
      '',
    )
  return ACTION_VERBS.has(firstWord(trimmed)) || REQUEST_OPENERS.test(trimmed)
}

/** True when a sentence asks for something; false for pure context ("I'm planning a trip."). */
export function isRequest(sentence: string): boolean {
  const trimmed = sentence.trim()
  if (trimmed.length === 0) return false
  if (trimmed.endsWith('?')) return true
  return startsWithAction(trimmed) || EMBEDDED_REQUEST.test(trimmed)
}

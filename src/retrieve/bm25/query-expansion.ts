/**
 * Head-verb expansion for BM25 queries. Agents write steps with nouns used as verbs ("email the
 * forecast to Ann", "text my mom", "ping Sam"), while tools are named verb_object ("send_email",
 * "send_sms"). Without expansion BM25 matches the step's object ("forecast") better than its
 * action, because the action noun ("email") occurs in every mail tool and so has a low IDF. When a
 * step starts with such a verb, its canonical phrase is appended to the query: classic
 * dictionary-based query expansion, limited to the head verb so objects are never rewritten.
 * @module
 */

/** Head verb → phrase appended to the query. Lower-case; matched on the step's first word. */
export const HEAD_VERB_EXPANSIONS: Readonly<Record<string, string>> = {
  email: 'send email',
  'e-mail': 'send email',
  mail: 'send email',
  text: 'send sms text message',
  sms: 'send sms text message',
  message: 'send message',
  msg: 'send message',
  dm: 'send direct message',
  ping: 'send message',
  whatsapp: 'send whatsapp message',
  slack: 'send slack message',
  call: 'call phone',
  ring: 'call phone',
  phone: 'call phone',
  dial: 'call phone',
  tweet: 'post tweet',
  google: 'web search',
  remind: 'create reminder',
  cab: 'request ride',
  uber: 'request ride',
  lyft: 'request ride',
}

/** Leading words that carry no action ("please", "then", "can you"…), skipped to find the head verb. */
const LEADING_FILLER =
  /^(?:(?:please|kindly|also|then|and|so|now|just|quickly|can you|could you|would you|will you|go ahead and)\b[\s,]*)+/iu

export function expandHeadVerb(query: string): string {
  const rest = query.trim().replace(LEADING_FILLER, '')
  const head = /^[\p{L}-]+/u.exec(rest)?.[0].toLowerCase()
  const expansion = head === undefined ? undefined : HEAD_VERB_EXPANSIONS[head]
  return expansion === undefined ? query : `${query} ${expansion}`
}

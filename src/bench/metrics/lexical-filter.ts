/**
 * The reference paper's lexical filter: a gold tool that shares no content word with the query
 * cannot be found from the query's words, so "filtered" results leave it out. Content words are
 * the BM25 tokenizer's terms (stop words removed, stemmed), so "filtered" means exactly "some
 * query term could have matched this tool in the index".
 * @module
 */
import type { Tool } from '../../library/tool.ts'
import { tokenize } from '../../retrieve/bm25/tokenize.ts'

/** The words of a tool the filter compares: name, namespace and description. */
export function toolContentText(tool: Pick<Tool, 'name' | 'namespace' | 'description'>): string {
  return [tool.name, tool.namespace ?? '', tool.description].join(' ')
}

/**
 * Gold ids whose text shares at least one term with the query, in input order. `textOf` gives a
 * gold id's text; ids it does not know (gold names outside the library) are compared by the id
 * itself, which is the only text they have.
 */
export function lexicalFilter(
  query: string,
  gold: readonly string[],
  textOf: (id: string) => string | undefined,
): string[] {
  const queryTerms = new Set(tokenize(query))
  return gold.filter((id) => tokenize(textOf(id) ?? id).some((term) => queryTerms.has(term)))
}

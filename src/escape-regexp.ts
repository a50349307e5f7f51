/**
 * `text` with every regular-expression metacharacter escaped, for building a RegExp that matches
 * it literally (a file name, a path).
 * @module
 */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Shell quoting for the command lines toolsel prints, apart from cli-options.ts (its config
 * loading) so that main.ts can quote without loading that (round 49).
 * @module
 */

/** A word as a POSIX shell reads it back: as it is when plain, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

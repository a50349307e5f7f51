/**
 * The names of the retriever kinds (index.ts's RETRIEVER_KINDS, in its order), apart from the
 * kinds' code so that help texts can list them without loading it (bench/README.md, "CLI start
 * cost", round 49; TypeScript checks RETRIEVER_KINDS has exactly these keys,
 * test/cli/help-modules.test.ts their order).
 * @module
 */

export const RETRIEVER_KIND_NAMES = ['bm25', 'dense', 'hybrid', 'regex'] as const

export type RetrieverKindName = (typeof RETRIEVER_KIND_NAMES)[number]

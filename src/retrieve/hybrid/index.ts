export * from './hybrid-retriever.ts'
export * from './reciprocal-rank-fusion.ts'
export * from './weighted-min-max-fusion.ts'

export * from './bench-suite.ts'
export { SUITES, resolveSuites } from './suite-registry.ts'

/**
 * Defaults every planner shares, read by the planners, the plan parser and the config schema
 * (`plan.maxSteps`), so they are written once.
 * @module
 */
export const DEFAULT_PLAN_OPTIONS = Object.freeze({
  /** Most steps a plan may have; longer plans are cut. */
  maxSteps: 8,
})

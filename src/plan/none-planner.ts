import type { Planner, PlanResult } from '../contracts.ts'

/** The baseline without planning: the whole instruction is one step. */
export class NonePlanner implements Planner {
  readonly name = 'none'

  async plan(instruction: string): Promise<PlanResult> {
    return { steps: [instruction.trim()], planner: this.name }
  }
}

/** Testing one step of a draft against sample data and pinned outputs. */
export { TESTABLE_STEP_TYPES, stepTaskInput } from "./step-input";
export type { StepSample, StepTaskInput, TestableStepType } from "./step-input";

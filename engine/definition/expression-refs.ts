/**
 * The one place the definition code reaches into the expression module: the
 * static analysis of which refs a `${…}` template reads, and of which secrets
 * and variables it reads. Kept as a seam so the validator depends on these
 * signatures, not on the expression module's layout.
 */
export { analyzeDispatchString, dispatchPlaceholder, dispatchReferenceText, referencedRefs } from "../expressions";
export type { DispatchReference, ExpressionProblem, ExpressionReferences } from "../expressions";

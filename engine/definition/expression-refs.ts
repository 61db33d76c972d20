/**
 * The one place the definition code reaches into the expression module: the
 * static analysis of which refs a `${…}` template reads. Kept as a seam so the
 * validator depends on this signature, not on the expression module's layout.
 */
export { referencedRefs } from "../expressions";
export type { ExpressionProblem, ExpressionReferences } from "../expressions";

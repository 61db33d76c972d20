/**
 * compile(definition) → blueprint, stored beside the definition at
 * registration, and refsToLoad: which rows an evaluation loads (invariant 6).
 */
export { blueprintNode, compile } from "./compile";
export type { CompileOptions } from "./compile";
export { FORK_INSTANCE_SEPARATOR, forkInstanceRef, parseForkInstanceRef, refsToLoad } from "./refs-to-load";
export type { UnprocessedRef } from "./refs-to-load";
export { BLUEPRINT_VERSION } from "./types";
export type { Blueprint, BlueprintEdge, BlueprintNode } from "./types";

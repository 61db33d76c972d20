/**
 * The engine's public API: pure TypeScript, no I/O, no clock, no randomness.
 * Each module exports through its own `index.ts`; add yours below in the
 * section for it, keeping `export *` so this file stays a table of contents.
 */

// Workflow and task statuses (Conductor's names).
export * from "./statuses";

// Definitions in graph form: schema, node-type registry, graph helpers, validation.
export * from "./definition";

// Expressions: `${…}` templates, JSONPath, static ref analysis, the script interface.
export * from "./expressions";

// Conductor WorkflowDef import/export: schemas, nested → graph with a tidy layout, graph → nested where structured.
export * from "./conductor";

// compile(definition) → blueprint, refsToLoad.
export * from "./compile";

// decide(blueprint, state, now) → commands, EvaluationState.
export * from "./decide";

// testkit (simulate, replay).
export * from "./testkit";

// Testing one step of a draft: its task input from sample data and pinned outputs.
export * from "./step-test";

// The templates gallery: ready-made definitions a new workflow can start from.
export * from "./templates";

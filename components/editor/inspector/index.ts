export { NodeInspector } from "./node-inspector";
export type { NodeInspectorProps } from "./node-inspector";
export { WorkflowSettings } from "./workflow-settings";
export type { WorkflowSettingsProps } from "./workflow-settings";

export { createNodeFlowClient, NodeFlowApiError } from "./http-client";
export type { NodeFlowClient, NodeFlowClientOptions, ReadinessReport } from "./http-client";

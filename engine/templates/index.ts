import type { WorkflowDefinition } from "../definition";
import approvalFlow from "./approval-flow.json";
import etlWithJq from "./etl-with-jq.json";
import fanOutOverList from "./fan-out-over-list.json";
import httpFanOutJoin from "./http-fan-out-join.json";
import retryWithBackoff from "./retry-with-backoff.json";
import scheduledReport from "./scheduled-report.json";
import webhookToHumanReview from "./webhook-to-human-review.json";
import welcomeDrip from "./welcome-drip.json";

/**
 * The templates gallery: ready-made workflows a new one can start from
 * ("New from template" on the Workflows page). Each is a plain definition
 * file beside this module, validated and exported to Conductor by
 * `templates.test.ts`, so a template that stops being valid fails the build
 * rather than the person opening it.
 */

/** One template of the gallery. */
export interface WorkflowTemplate {
  /** Stable id, used in the URL (`/workflows/new?template=<id>`); also the definition's name. */
  readonly id: string;
  readonly title: string;
  /** What the workflow does, one sentence (the definition's description). */
  readonly summary: string;
  /** The node types it shows off, for the gallery card. */
  readonly features: readonly string[];
  readonly definition: WorkflowDefinition;
}

// The JSON modules are typed by their contents, which is wider than the schema's literal types;
// templates.test.ts is what proves each one is a valid definition.
const def = (json: unknown): WorkflowDefinition => json as WorkflowDefinition;

/** Every template, in gallery order. */
export const WORKFLOW_TEMPLATES: readonly WorkflowTemplate[] = Object.freeze([
  { id: "approval-flow", title: "Approval flow", summary: def(approvalFlow).description ?? "", features: ["Human task", "Switch", "Inline"], definition: def(approvalFlow) },
  { id: "http-fan-out-join", title: "HTTP fan-out and join", summary: def(httpFanOutJoin).description ?? "", features: ["HTTP", "Join", "Inline"], definition: def(httpFanOutJoin) },
  { id: "retry-with-backoff", title: "Retry with backoff", summary: def(retryWithBackoff).description ?? "", features: ["HTTP", "Worker task", "Retry policy"], definition: def(retryWithBackoff) },
  { id: "scheduled-report", title: "Scheduled report", summary: def(scheduledReport).description ?? "", features: ["HTTP", "jq", "Schedule"], definition: def(scheduledReport) },
  {
    id: "webhook-to-human-review",
    title: "Webhook to human review",
    summary: def(webhookToHumanReview).description ?? "",
    features: ["Webhook", "Inline", "Switch", "Human task"],
    definition: def(webhookToHumanReview),
  },
  { id: "fan-out-over-list", title: "Fan out over a list", summary: def(fanOutOverList).description ?? "", features: ["Dynamic fork", "Worker task"], definition: def(fanOutOverList) },
  { id: "welcome-drip", title: "Welcome drip", summary: def(welcomeDrip).description ?? "", features: ["HTTP", "Wait", "Switch"], definition: def(welcomeDrip) },
  { id: "etl-with-jq", title: "ETL with jq", summary: def(etlWithJq).description ?? "", features: ["HTTP", "jq", "Worker task"], definition: def(etlWithJq) },
]);

/** The template with this id, or undefined. */
export function findWorkflowTemplate(id: string): WorkflowTemplate | undefined {
  return WORKFLOW_TEMPLATES.find((t) => t.id === id);
}

import { z } from "zod";
import { NameSchema } from "../../engine";

/**
 * Conductor's EventHandler as its clients send it (POST/PUT /api/event) and
 * as REST takes it: a name, the event it listens to (`conductor:<workflow
 * name>:<queue>` for what EVENT tasks publish), an optional JavaScript
 * condition over the payload (`$.status == 'READY'`), and actions whose
 * `${…}` placeholders resolve from the payload root (`${orderId}`).
 * Unknown fields are dropped, as Conductor's Jackson mapping does.
 */

const Template = z.record(z.string(), z.unknown());
const WorkflowRef = z.string().min(1).max(500).meta({ description: "A workflow id, usually a placeholder such as ${workflowInstanceId}." });

const TaskTarget = z
  .object({
    workflowId: WorkflowRef,
    taskRefName: z.string().min(1).max(400).optional(),
    taskId: z.string().min(1).max(500).optional(),
    output: Template.optional(),
  })
  .refine((t) => t.taskRefName !== undefined || t.taskId !== undefined, { message: "name the task: taskRefName or taskId", path: ["taskRefName"] });

const common = { expandInlineJSON: z.boolean().optional() };

export const EventActionSchema = z.discriminatedUnion("action", [
  z.object({
    action: z.literal("start_workflow"),
    start_workflow: z.object({
      name: z.string().min(1).max(500),
      version: z.number().int().min(1).nullable().optional(),
      input: Template.optional(),
      correlationId: z.string().max(500).nullable().optional(),
      priority: z.number().int().min(0).max(99).optional(),
    }),
    ...common,
  }),
  z.object({ action: z.literal("complete_task"), complete_task: TaskTarget, ...common }),
  z.object({ action: z.literal("fail_task"), fail_task: TaskTarget, ...common }),
  z.object({
    action: z.literal("terminate_workflow"),
    terminate_workflow: z.object({ workflowId: WorkflowRef, terminationReason: z.string().max(2000).optional() }),
    ...common,
  }),
  z.object({
    action: z.literal("update_workflow_variables"),
    update_workflow_variables: z.object({ workflowId: WorkflowRef, variables: Template, appendArray: z.boolean().optional() }),
    ...common,
  }),
]);
export type EventAction = z.output<typeof EventActionSchema>;

export const EVENT_HANDLER_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,200}$/;

export const EventHandlerSchema = z.object({
  name: z.string().regex(EVENT_HANDLER_NAME_PATTERN, "must be letters, digits, _ . or - (up to 200)"),
  description: z.string().max(1000).nullable().optional(),
  event: z
    .string()
    .min(1)
    .max(500)
    .regex(/^[a-z_]+:.+$/, "must be <source>:<queue>, e.g. conductor:my_workflow:order_ready"),
  condition: z.string().max(10_000).nullable().optional(),
  evaluatorType: z.enum(["javascript", "graaljs"]).default("javascript"),
  actions: z.array(EventActionSchema).min(1, "give at least one action").max(20),
  active: z.boolean().default(false),
});
export type EventHandlerConfig = z.output<typeof EventHandlerSchema>;

/** A workflow name that is a literal, not a placeholder: what a save can check exists. */
export function literalWorkflowName(name: string): string | null {
  return name.includes("${") || !NameSchema.safeParse(name).success ? null : name;
}

import { createCallerFactory, router } from "../init";
import { aiProvidersRouter } from "./ai-providers";
import { apiKeysRouter } from "./api-keys";
import { auditRouter } from "./audit";
import { authRouter } from "./auth";
import { dashboardRouter } from "./dashboard";
import { eventHandlersRouter } from "./event-handlers";
import { executionsRouter } from "./executions";
import { formTemplatesRouter } from "./form-templates";
import { groupsRouter } from "./groups";
import { humanTasksRouter } from "./human-tasks";
import { namespacesRouter } from "./namespaces";
import { runsRouter } from "./runs";
import { schedulesRouter } from "./schedules";
import { secretsRouter } from "./secrets";
import { statusListenersRouter } from "./status-listeners";
import { stepTestsRouter } from "./step-tests";
import { systemRouter } from "./system";
import { usersRouter } from "./users";
import { variablesRouter } from "./variables";
import { webhooksRouter } from "./webhooks";
import { workflowsRouter } from "./workflows";

export const appRouter = router({
  aiProviders: aiProvidersRouter,
  apiKeys: apiKeysRouter,
  audit: auditRouter,
  auth: authRouter,
  dashboard: dashboardRouter,
  eventHandlers: eventHandlersRouter,
  executions: executionsRouter,
  formTemplates: formTemplatesRouter,
  groups: groupsRouter,
  humanTasks: humanTasksRouter,
  namespaces: namespacesRouter,
  runs: runsRouter,
  schedules: schedulesRouter,
  secrets: secretsRouter,
  statusListeners: statusListenersRouter,
  stepTests: stepTestsRouter,
  system: systemRouter,
  users: usersRouter,
  variables: variablesRouter,
  webhooks: webhooksRouter,
  workflows: workflowsRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);

import { createCallerFactory, router } from "../init";
import { apiKeysRouter } from "./api-keys";
import { auditRouter } from "./audit";
import { authRouter } from "./auth";
import { executionsRouter } from "./executions";
import { formTemplatesRouter } from "./form-templates";
import { groupsRouter } from "./groups";
import { humanTasksRouter } from "./human-tasks";
import { namespacesRouter } from "./namespaces";
import { runsRouter } from "./runs";
import { systemRouter } from "./system";
import { usersRouter } from "./users";
import { workflowsRouter } from "./workflows";

export const appRouter = router({
  apiKeys: apiKeysRouter,
  audit: auditRouter,
  auth: authRouter,
  executions: executionsRouter,
  formTemplates: formTemplatesRouter,
  groups: groupsRouter,
  humanTasks: humanTasksRouter,
  namespaces: namespacesRouter,
  runs: runsRouter,
  system: systemRouter,
  users: usersRouter,
  workflows: workflowsRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);

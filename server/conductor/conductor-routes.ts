import type { AnyConductorRoute } from "./define-conductor-route";
import {
  getTaskDefRoute,
  getWorkflowDefRoute,
  listTaskDefsRoute,
  listWorkflowDefsRoute,
  registerTaskDefsRoute,
  registerWorkflowDefRoute,
  updateTaskDefRoute,
  updateWorkflowDefsRoute,
} from "./routes/metadata-routes";
import {
  allQueueSizesRoute,
  appendTaskLogRoute,
  batchPollRoute,
  getTaskLogsRoute,
  getTaskRoute,
  pollTaskRoute,
  queueSizeRoute,
  queueSizesRoute,
  updateTaskRoute,
  updateTaskByRefRoute,
  updateTaskV2Route,
} from "./routes/task-routes";
import { EVENT_ROUTES } from "./routes/event-routes";
import { SECRET_ROUTES } from "./routes/secret-routes";
import { SCHEDULER_ROUTES } from "./routes/scheduler-routes";
import { tokenRoute } from "./routes/token-route";
import {
  executeWorkflowRoute,
  getWorkflowRoute,
  pauseWorkflowRoute,
  rerunWorkflowRoute,
  restartWorkflowRoute,
  resumeWorkflowRoute,
  retryWorkflowRoute,
  runningWorkflowsRoute,
  searchWorkflowsRoute,
  skipTaskRoute,
  startWorkflowByNameRoute,
  startWorkflowRoute,
  terminateWorkflowRoute,
  workflowStatusRoute,
} from "./routes/workflow-routes";

/**
 * Every route of /conductor/api, in one table: what the dispatcher serves and
 * what the default-deny test enumerates. A route not in this table does not
 * exist. Only POST /token is public.
 */
export const CONDUCTOR_ROUTES: readonly AnyConductorRoute[] = [
  tokenRoute,
  pollTaskRoute,
  batchPollRoute,
  updateTaskRoute,
  updateTaskV2Route,
  updateTaskByRefRoute,
  getTaskRoute,
  appendTaskLogRoute,
  getTaskLogsRoute,
  queueSizesRoute,
  queueSizeRoute,
  allQueueSizesRoute,
  registerWorkflowDefRoute,
  updateWorkflowDefsRoute,
  getWorkflowDefRoute,
  listWorkflowDefsRoute,
  registerTaskDefsRoute,
  updateTaskDefRoute,
  getTaskDefRoute,
  listTaskDefsRoute,
  startWorkflowRoute,
  startWorkflowByNameRoute,
  executeWorkflowRoute,
  searchWorkflowsRoute,
  runningWorkflowsRoute,
  getWorkflowRoute,
  workflowStatusRoute,
  pauseWorkflowRoute,
  resumeWorkflowRoute,
  terminateWorkflowRoute,
  restartWorkflowRoute,
  retryWorkflowRoute,
  rerunWorkflowRoute,
  skipTaskRoute,
  ...EVENT_ROUTES,
  ...SECRET_ROUTES,
  ...SCHEDULER_ROUTES,
];

import type { AnyRoute } from "./define-route";
import { createDefinitionRoute, getDefinitionRoute, listDefinitionsRoute, validateDefinitionRoute } from "./routes/definitions";
import {
  claimHumanTaskRoute,
  completeHumanTaskRoute,
  getHumanTaskRoute,
  listHumanTasksRoute,
  reassignHumanTaskRoute,
  releaseHumanTaskRoute,
} from "./routes/human-tasks";
import { openApiRoute } from "./routes/openapi-document";
import {
  completeRunTaskRoute,
  pauseRunRoute,
  rerunRunRoute,
  restartRunRoute,
  resumeRunRoute,
  retryRunRoute,
  skipTaskRoute,
  terminateRunRoute,
} from "./routes/run-actions";
import { getRunRoute, searchRunsRoute, startRunRoute } from "./routes/runs";
import { getRunHistoryRoute } from "./routes/run-history";
import { getTaskDefinitionRoute, listTaskDefinitionsRoute, putTaskDefinitionRoute } from "./routes/task-definitions";
import {
  appendTaskLogsRoute,
  completeTaskRoute,
  failTaskRoute,
  heartbeatTaskRoute,
  listTaskLogsRoute,
  pollTasksRoute,
  releaseTaskRoute,
} from "./routes/worker-tasks";
import { EVENT_HANDLER_ROUTES } from "./routes/event-handlers";
import { STATUS_LISTENER_ROUTES } from "./routes/status-listeners";
import { SECRET_ROUTES } from "./routes/secrets";
import { VARIABLE_ROUTES } from "./routes/variables";
import { WEBHOOK_ROUTES } from "./routes/webhooks";
import { SCHEDULE_ROUTES } from "./routes/schedules";
import { AI_PROVIDER_ROUTES } from "./routes/ai-providers";

/**
 * Every route of /api/v1, in one table: what the dispatcher serves, what the
 * OpenAPI document lists, and what the default-deny test enumerates. A route
 * not in this table does not exist.
 */
export const ROUTES: readonly AnyRoute[] = [
  openApiRoute,
  createDefinitionRoute,
  listDefinitionsRoute,
  getDefinitionRoute,
  validateDefinitionRoute,
  putTaskDefinitionRoute,
  getTaskDefinitionRoute,
  listTaskDefinitionsRoute,
  startRunRoute,
  searchRunsRoute,
  getRunRoute,
  getRunHistoryRoute,
  pauseRunRoute,
  resumeRunRoute,
  terminateRunRoute,
  retryRunRoute,
  rerunRunRoute,
  restartRunRoute,
  skipTaskRoute,
  completeRunTaskRoute,
  pollTasksRoute,
  heartbeatTaskRoute,
  releaseTaskRoute,
  completeTaskRoute,
  failTaskRoute,
  appendTaskLogsRoute,
  listTaskLogsRoute,
  listHumanTasksRoute,
  getHumanTaskRoute,
  claimHumanTaskRoute,
  releaseHumanTaskRoute,
  completeHumanTaskRoute,
  reassignHumanTaskRoute,
  ...SECRET_ROUTES,
  ...VARIABLE_ROUTES,
  ...WEBHOOK_ROUTES,
  ...SCHEDULE_ROUTES,
  ...EVENT_HANDLER_ROUTES,
  ...STATUS_LISTENER_ROUTES,
  ...AI_PROVIDER_ROUTES,
];

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
];

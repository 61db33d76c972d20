import { createCallerFactory, router } from "../init";
import { systemRouter } from "./system";
import { workflowsRouter } from "./workflows";

export const appRouter = router({
  system: systemRouter,
  workflows: workflowsRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);

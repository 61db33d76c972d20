import { readSystemStatus } from "../../system-status";
import { publicProcedure, router } from "../init";

export const systemRouter = router({
  status: publicProcedure.query(({ ctx }) => readSystemStatus(ctx.db, ctx.config)),
});

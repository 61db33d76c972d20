import { readSystemStatus } from "../../web/system-status";
import { protectedProcedure, router } from "../init";

export const systemRouter = router({
  // Any signed-in caller: it names the Postgres version and migrations, which
  // is nothing secret but nothing an anonymous visitor needs either.
  status: protectedProcedure.query(({ ctx }) => readSystemStatus(ctx.db, ctx.config)),
});

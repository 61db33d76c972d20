import { defineWorker, TerminalError } from "../sdk";

/**
 * The worker of examples/hello-workflow.json: one handler, for the `greet`
 * queue that both of its steps run on. Run it with
 *
 *   NODE_FLOW_API_KEY=nf_… npm run nf -- worker examples/hello-worker.ts
 *
 * A task's input is what its node's `input` evaluated to; what the handler
 * returns becomes the task's output, which later steps read as
 * ${ref.output…}. Throwing a TerminalError fails the task for good; anything
 * else thrown fails it retryably (its retry policy decides what follows).
 */
export default defineWorker({
  concurrency: 4,
  queues: {
    greet: (task, ctx) => {
      const { name, replyTo } = task.input;
      if (typeof name !== "string" || name.trim() === "") throw new TerminalError("input.name must be a non-empty string");
      ctx.log(`greeting ${name}`);
      if (typeof replyTo === "string") return { greeting: `${name} says: thanks! (you said "${replyTo}")` };
      return { greeting: `Hello, ${name}!` };
    },
  },
});

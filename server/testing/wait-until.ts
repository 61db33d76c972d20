/**
 * Polls `check` every `intervalMs` until it returns true; throws, naming `what`
 * and the last value `describe` gives, once `timeoutMs` has passed. A bounded
 * wait for a condition, never a fixed sleep standing in for one.
 */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  options: { what: string; timeoutMs: number; intervalMs?: number; describe?: () => Promise<string> | string },
): Promise<void> {
  const { what, timeoutMs, intervalMs = 100 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) {
      const state = options.describe ? `: ${await options.describe()}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${state}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

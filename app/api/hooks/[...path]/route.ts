import { answerWebhookCall } from "@/server/webhooks/receive-webhook";
import { webhookDepsOf } from "@/server/webhooks/webhook-deps";
import { fromFetchRequest, toFetchResponse } from "@/server/web/api-exchange";
import { getWebContext } from "@/server/web/web-context";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

// Deliberately public: a sender's call carries the webhook's secret (a token
// or a signature), which server/webhooks/receive-webhook.ts checks first. The
// web process serves this path itself (server/web/main.ts); Next's dev server
// reaches it here.
async function handler(request: Request): Promise<Response> {
  return toFetchResponse(await answerWebhookCall(() => webhookDepsOf(getWebContext()), fromFetchRequest(request)));
}

export { handler as GET, handler as POST };

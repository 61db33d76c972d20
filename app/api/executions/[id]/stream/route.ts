import { serveExecutionStream } from "@/server/realtime/stream-routes";
import { getWebContext } from "@/server/web/web-context";

// Authenticated like tRPC (session cookie or Bearer key) inside serveExecutionStream; 404 for a run the caller cannot see.
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await params;
  return serveExecutionStream(getWebContext(), request, id);
}

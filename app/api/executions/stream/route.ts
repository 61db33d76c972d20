import { serveNamespaceStream } from "@/server/realtime/stream-routes";
import { getWebContext } from "@/server/web/web-context";

// Authenticated like tRPC (session cookie or Bearer key) inside serveNamespaceStream; ?namespace= is authorized for "read".
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(request: Request): Promise<Response> {
  return serveNamespaceStream(getWebContext(), request);
}

import { checkLiveness } from "@/server/web/health";

// Deliberately public, like /api/health/ready: monitors and orchestrators call
// it without credentials, and it reveals nothing but "this process answers".
export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export function GET(): Response {
  return Response.json(checkLiveness(), { headers: { "cache-control": "no-store" } });
}

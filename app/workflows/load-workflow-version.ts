import { TRPCError } from "@trpc/server";
import { notFound } from "next/navigation";
import type { WorkflowDefinition } from "@/engine";
import { requestTrpc } from "../console-session";
import { getServerQueryClient } from "../trpc-server";

/** One stored version for a page, as the signed-in user may read it; a missing (or foreign) one is the 404 page. */
export async function loadWorkflowVersion(namespace: string, name: string, version?: number) {
  try {
    const row = await getServerQueryClient().fetchQuery(requestTrpc.workflows.get.queryOptions({ namespace, name, version }));
    return { ...row, definition: row.definition as unknown as WorkflowDefinition };
  } catch (error) {
    // A name the input schema refuses cannot exist either.
    if (error instanceof TRPCError && (error.code === "NOT_FOUND" || error.code === "BAD_REQUEST")) notFound();
    throw error;
  }
}

/** `?version=3` as a number, or undefined when absent; anything else is the 404 page. */
export function parseVersionParam(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0] : value;
  if (!text || !/^[1-9]\d{0,8}$/.test(text)) notFound();
  return Number(text);
}

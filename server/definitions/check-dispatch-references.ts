import type { Db } from "@/db/pool";
import { definitionDispatchReferences, dispatchReferenceText } from "@/engine";
import type { Problem, WorkflowDefinition } from "@/engine";

/**
 * The part of validating a definition the engine cannot do: every
 * `${workflow.secrets.NAME}` and `${workflow.env.NAME}` its tasks' inputs read
 * must name a secret or variable of the namespace it is saved in. Each
 * missing one is a problem on the node that reads it, at the string's path.
 * Two queries, whatever the definition holds; none when it reads nothing.
 */
export async function missingDispatchReferences(db: Db, namespaceId: string, definition: WorkflowDefinition): Promise<Problem[]> {
  const found = definitionDispatchReferences(definition);
  if (found.length === 0) return [];
  const secretNames = [...new Set(found.filter((f) => f.reference.kind === "secrets").map((f) => f.reference.name))];
  const variableNames = [...new Set(found.filter((f) => f.reference.kind === "env").map((f) => f.reference.name))];
  const secrets = new Set(
    secretNames.length === 0
      ? []
      : (await db.selectFrom("Secrets").select("name").where("namespaceId", "=", namespaceId).where("name", "in", secretNames).execute()).map((r) => r.name),
  );
  const variables = new Set(
    variableNames.length === 0
      ? []
      : (await db.selectFrom("EnvironmentVariables").select("name").where("namespaceId", "=", namespaceId).where("name", "in", variableNames).execute()).map((r) => r.name),
  );
  const problems: Problem[] = [];
  const seen = new Set<string>();
  for (const { reference, ref, path } of found) {
    const exists = reference.kind === "secrets" ? secrets.has(reference.name) : variables.has(reference.name);
    const key = `${JSON.stringify(path)}\u0000${reference.kind}\u0000${reference.name}`;
    if (exists || seen.has(key)) continue;
    seen.add(key);
    problems.push(
      reference.kind === "secrets"
        ? { code: "unknown-secret", message: `${dispatchReferenceText(reference)} names no secret of this namespace: add it in Settings → Secrets first`, ref, path }
        : { code: "unknown-variable", message: `${dispatchReferenceText(reference)} names no environment variable of this namespace: add it in Settings → Variables first`, ref, path },
    );
  }
  return problems;
}

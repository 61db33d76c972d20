import { describe, expect, it } from "vitest";
import { exportConductorWorkflow, importConductorWorkflow } from "../conductor";
import { validateDefinition } from "../definition";
import { WORKFLOW_TEMPLATES, findWorkflowTemplate } from "./index";

describe("the templates gallery", () => {
  it("has at least eight templates with distinct ids, each named after its id", () => {
    expect(WORKFLOW_TEMPLATES.length).toBeGreaterThanOrEqual(8);
    expect(new Set(WORKFLOW_TEMPLATES.map((t) => t.id)).size).toBe(WORKFLOW_TEMPLATES.length);
    for (const t of WORKFLOW_TEMPLATES) {
      expect(t.definition.name).toBe(t.id);
      expect(t.summary.length).toBeGreaterThan(10);
      expect(findWorkflowTemplate(t.id)).toBe(t);
    }
  });

  it.each(WORKFLOW_TEMPLATES.map((t) => [t.id, t] as const))("%s is a valid definition with no problem at all", (_id, t) => {
    const result = validateDefinition(t.definition);
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it.each(WORKFLOW_TEMPLATES.map((t) => [t.id, t] as const))("%s exports to Conductor and imports back with its notes", (_id, t) => {
    const out = exportConductorWorkflow(t.definition);
    expect(out.ok ? [] : out.problems).toEqual([]);
    if (!out.ok) return;
    const back = importConductorWorkflow(out.workflowDef);
    expect(back.ok).toBe(true);
    if (back.ok) expect(back.definition.notes).toEqual(t.definition.notes);
  });
});

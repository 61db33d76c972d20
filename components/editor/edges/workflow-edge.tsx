"use client";

import { BaseEdge, EdgeLabelRenderer, getSmoothStepPath } from "@xyflow/react";
import type { EdgeProps, EdgeTypes } from "@xyflow/react";
import { memo } from "react";
import type { WorkflowFlowEdge } from "../flow-mapping";
import { useEdgeTaken } from "../run-overlay";

const DIFF_STROKE = { added: "#10b981", changed: "#f59e0b", removed: "var(--danger)" } as const;

/**
 * An edge, with its SWITCH case as a label near the source. The wide
 * invisible interaction path is also the drop target for inserting a node
 * from the palette onto the edge (the canvas finds it by `data-id`).
 */
export const WorkflowEdgeView = memo(function WorkflowEdgeView(props: EdgeProps<WorkflowFlowEdge>) {
  const { id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, selected, data, markerEnd } = props;
  const [path] = getSmoothStepPath({ sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, borderRadius: 10 });
  const diff = data?.diff ?? null;
  // On a run's page: the path taken is drawn strong, the rest faint.
  const taken = useEdgeTaken(id);
  const stroke = diff ? DIFF_STROKE[diff] : taken ? "#10b981" : selected ? "var(--accent)" : "var(--muted)";
  return (
    <>
      <BaseEdge
        id={id}
        interactionWidth={24}
        markerEnd={markerEnd}
        path={path}
        style={{
          stroke,
          strokeWidth: selected || diff || taken ? 2.25 : 1.5,
          strokeDasharray: diff === "removed" ? "6 4" : undefined,
          opacity: taken === false ? 0.45 : 1,
        }}
      />
      {data?.caseLabel ? (
        <EdgeLabelRenderer>
          <div
            className="pointer-events-none absolute rounded-md border border-separator bg-surface px-1.5 py-0.5 text-[11px] font-medium text-muted shadow-sm"
            style={{ transform: `translate(-50%, 0) translate(${sourceX}px, ${sourceY + 10}px)` }}
          >
            {data.caseLabel}
          </div>
        </EdgeLabelRenderer>
      ) : null}
    </>
  );
});

export const EDGE_COMPONENTS: EdgeTypes = { workflow: WorkflowEdgeView };

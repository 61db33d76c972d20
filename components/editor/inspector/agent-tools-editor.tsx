"use client";

import { Button, Chip, Description, Input, Label, Switch, TextArea, TextField } from "@heroui/react";
import { Plus, Trash2 } from "lucide-react";
import { useEffect, useMemo, useRef, useState } from "react";
import { AGENT_TOOL_KINDS } from "@/engine";
import type { AgentTool, AgentToolKind, Problem, WorkflowNode } from "@/engine";
import { OptionSelect } from "../../option-select";
import type { SelectOption } from "../../option-select";
import { CodeEditor } from "../code-editor";
import { formatJson, parseJson } from "./json-text";
import { nodeRelativePath } from "./form-model";

type AgentNode = Extract<WorkflowNode, { type: "AGENT" }>;

const KIND_OPTIONS: readonly SelectOption<AgentToolKind>[] = [
  { id: "HTTP", label: "HTTP call" },
  { id: "SIMPLE", label: "Worker task" },
  { id: "SUB_WORKFLOW", label: "Sub-workflow" },
  { id: "CALL_MCP_TOOL", label: "MCP tool" },
];
const METHOD_OPTIONS: readonly SelectOption<string>[] = ["POST", "GET", "PUT", "PATCH", "DELETE"].map((m) => ({ id: m, label: m }));

/** A tool of `kind` keeping what the kinds share (name, description, arguments schema), with the kind's config fresh. */
export function toolOfKind(base: Pick<AgentTool, "name" | "description" | "inputSchema"> & { approval?: boolean }, kind: AgentToolKind): AgentTool {
  const shared = {
    name: base.name,
    ...(base.description === undefined ? {} : { description: base.description }),
    ...(base.inputSchema === undefined ? {} : { inputSchema: base.inputSchema }),
    ...(base.approval === undefined ? {} : { approval: base.approval }),
  };
  switch (kind) {
    case "HTTP":
      return { ...shared, type: "HTTP", httpRequest: { uri: "https://api.example.com/tool", method: "POST" } };
    case "SIMPLE":
      return { ...shared, type: "SIMPLE", taskName: base.name };
    case "SUB_WORKFLOW":
      return { ...shared, type: "SUB_WORKFLOW", subWorkflowParam: { name: "my_workflow" } };
    case "CALL_MCP_TOOL":
      return { ...shared, type: "CALL_MCP_TOOL", mcp: { mcpServer: "https://tools.example.com/mcp" } };
  }
}

/** A name no tool of the list has yet: tool_1, tool_2, … */
export function freshToolName(tools: readonly AgentTool[]): string {
  const taken = new Set(tools.map((t) => t.name));
  for (let n = tools.length + 1; ; n++) if (!taken.has(`tool_${n}`)) return `tool_${n}`;
}

/**
 * The agent's tools: one card per tool with its kind, the name, description
 * and arguments schema the model sees, and the kind's own settings (the
 * request, the worker's queue, the workflow, the MCP server). Edits go out as
 * whole new nodes, like every inspector field; the validator's problems for
 * `agent.tools.<i>…` are shown on their card.
 */
export function AgentToolsEditor({
  node,
  problems,
  readOnly,
  onChange,
}: {
  node: AgentNode;
  problems: readonly Problem[];
  readOnly: boolean;
  onChange: (next: WorkflowNode, field: string) => void;
}) {
  const tools = useMemo(() => node.agent.tools ?? [], [node.agent.tools]);
  const setTools = (next: AgentTool[], field: string) => onChange({ ...node, agent: { ...node.agent, tools: next } }, `agent.tools${field}`);
  const update = (i: number, tool: AgentTool, field: string) => setTools(tools.map((t, j) => (j === i ? tool : t)), `.${i}.${field}`);
  const problemsOf = (i: number) =>
    problems.filter((p) => {
      const rel = nodeRelativePath(p.path);
      return rel !== null && rel[0] === "agent" && rel[1] === "tools" && rel[2] === i;
    });

  return (
    <section aria-label="Tools" className="flex flex-col gap-3" data-panel="agent-tools">
      <div className="flex items-baseline justify-between">
        <h3 className="text-[11px] font-semibold tracking-wide text-muted uppercase">Tools</h3>
        <span className="text-xs text-muted">{tools.length === 1 ? "1 tool" : `${tools.length} tools`}</span>
      </div>
      {tools.length === 0 ? <Description>No tools yet: the model answers from its instructions and prompt alone.</Description> : null}
      <ol className="flex flex-col gap-3">
        {tools.map((tool, i) => (
          <li key={i}>
            <ToolCard
              index={i}
              problems={problemsOf(i)}
              readOnly={readOnly}
              tool={tool}
              onPatch={(next, field) => update(i, next, field)}
              onRemove={() => setTools(tools.filter((_, j) => j !== i), `.${i}`)}
            />
          </li>
        ))}
      </ol>
      {readOnly ? null : (
        <Button
          className="self-start"
          size="sm"
          variant="secondary"
          onPress={() => setTools([...tools, toolOfKind({ name: freshToolName(tools), description: undefined, inputSchema: { type: "object", properties: {} } }, "HTTP")], ".add")}
        >
          <Plus aria-hidden className="size-4" />
          Add tool
        </Button>
      )}
    </section>
  );
}

function ToolCard({
  tool,
  index,
  problems,
  readOnly,
  onPatch,
  onRemove,
}: {
  tool: AgentTool;
  index: number;
  problems: readonly Problem[];
  readOnly: boolean;
  onPatch: (next: AgentTool, field: string) => void;
  onRemove: () => void;
}) {
  const label = `Tool ${index + 1}`;
  const text = (field: string, title: string, value: string | undefined, set: (v: string) => AgentTool, options: { mono?: boolean; description?: string } = {}) => (
    <TextField isReadOnly={readOnly} value={value ?? ""} onChange={(v) => onPatch(set(v), field)}>
      <Label>{title}</Label>
      <Input className={options.mono === true ? "font-mono" : undefined} spellCheck={false} />
      {options.description === undefined ? null : <Description>{options.description}</Description>}
    </TextField>
  );
  return (
    <div aria-label={label} className="flex flex-col gap-3 rounded-xl border border-separator p-3" data-tool-index={index} role="group">
      <div className="flex items-center gap-2">
        <Chip className="font-mono" size="sm" variant="secondary">
          {tool.name || "unnamed"}
        </Chip>
        <span className="flex-1" />
        {readOnly ? null : (
          <Button isIconOnly aria-label={`Remove ${label}`} size="sm" variant="ghost" onPress={onRemove}>
            <Trash2 aria-hidden className="size-4" />
          </Button>
        )}
      </div>
      <OptionSelect
        isDisabled={readOnly}
        label="Kind"
        options={KIND_OPTIONS.filter((o) => (AGENT_TOOL_KINDS as readonly string[]).includes(o.id))}
        value={tool.type}
        onChange={(kind) => {
          if (kind !== tool.type) onPatch(toolOfKind(tool, kind), "type");
        }}
      />
      {text("name", "Name", tool.name, (v) => ({ ...tool, name: v }), { mono: true, description: "What the model calls it: letters, digits, _ or -." })}
      <TextField isReadOnly={readOnly} value={tool.description ?? ""} onChange={(v) => onPatch({ ...tool, description: v === "" ? undefined : v }, "description")}>
        <Label>Description</Label>
        <TextArea rows={2} />
        <Description>When the model should use it, and what it gives back.</Description>
      </TextField>
      <JsonObjectField
        label={`${label} Arguments schema`}
        readOnly={readOnly}
        title="Arguments schema"
        value={tool.inputSchema}
        onValue={(schema) => onPatch({ ...tool, inputSchema: schema }, "inputSchema")}
      />
      {tool.type === "HTTP" ? (
        <>
          {text("httpRequest.uri", "URI", tool.httpRequest.uri, (v) => ({ ...tool, httpRequest: { ...tool.httpRequest, uri: v } }), { mono: true, description: "The arguments go as the JSON body (as query parameters for GET and DELETE)." })}
          <OptionSelect
            isDisabled={readOnly}
            label="Method"
            options={METHOD_OPTIONS}
            value={(tool.httpRequest.method ?? "POST").toUpperCase()}
            onChange={(method) => onPatch({ ...tool, httpRequest: { ...tool.httpRequest, method } }, "httpRequest.method")}
          />
        </>
      ) : null}
      {tool.type === "SIMPLE" ? text("taskName", "Task type", tool.taskName, (v) => ({ ...tool, taskName: v }), { mono: true, description: "The queue your workers poll; the arguments are the task's input." }) : null}
      {tool.type === "SUB_WORKFLOW"
        ? text("subWorkflowParam.name", "Workflow", tool.subWorkflowParam.name, (v) => ({ ...tool, subWorkflowParam: { ...tool.subWorkflowParam, name: v } }), { description: "Runs its latest version with the arguments as input." })
        : null}
      {tool.type === "CALL_MCP_TOOL" ? (
        <>
          {text("mcp.mcpServer", "MCP server", tool.mcp.mcpServer, (v) => ({ ...tool, mcp: { ...tool.mcp, mcpServer: v } }), { mono: true })}
          {text("mcp.method", "Tool on the server", tool.mcp.method, (v) => ({ ...tool, mcp: { ...tool.mcp, ...(v === "" ? { method: undefined } : { method: v }) } }), {
            mono: true,
            description: "Empty: the same name as this tool.",
          })}
        </>
      ) : null}
      <Switch isDisabled={readOnly} isSelected={tool.approval === true} onChange={(on) => onPatch({ ...tool, approval: on ? true : undefined }, "approval")}>
        <Switch.Content>
          <Switch.Control>
            <Switch.Thumb />
          </Switch.Control>
          Ask for approval
        </Switch.Content>
        <Description>Each call waits in the inbox until a person approves it; a rejected call does not run, and the model is told.</Description>
      </Switch>
      {problems.length > 0 ? (
        <ul className="flex list-disc flex-col gap-0.5 pl-4 text-xs text-danger" role="alert">
          {problems.map((p, j) => (
            <li key={`${p.code}-${j}`}>{p.message}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A JSON object edited as text: a value that does not parse is not saved, and says why. */
function JsonObjectField({ title, label, value, readOnly, onValue }: { title: string; label: string; value: Record<string, unknown> | undefined; readOnly: boolean; onValue: (v: Record<string, unknown> | undefined) => void }) {
  const [text, setText] = useState(() => (value === undefined ? "" : formatJson(value)));
  const [error, setError] = useState<string | null>(null);
  const synced = useRef(JSON.stringify(value ?? null));
  useEffect(() => {
    const c = JSON.stringify(value ?? null);
    if (c === synced.current) return;
    synced.current = c;
    setText(value === undefined ? "" : formatJson(value));
    setError(null);
  }, [value]);
  return (
    <div className="flex flex-col gap-1">
      <Label>{title}</Label>
      <CodeEditor
        ariaLabel={label}
        language="json"
        maxHeight="16rem"
        minHeight="3rem"
        placeholder='{ "type": "object", "properties": { "city": { "type": "string" } } }'
        readOnly={readOnly}
        value={text}
        onChange={(next) => {
          setText(next);
          if (next.trim() === "") {
            setError(null);
            synced.current = "null";
            onValue(undefined);
            return;
          }
          const parsed = parseJson(next, true);
          if (!parsed.ok) {
            setError(parsed.error.message);
            return;
          }
          setError(null);
          synced.current = JSON.stringify(parsed.value);
          onValue(parsed.value as Record<string, unknown>);
        }}
      />
      {error === null ? <Description>The JSON Schema of the arguments, as the model sees it.</Description> : <p className="text-xs text-danger">Not saved: {error}. The last valid value is kept.</p>}
    </div>
  );
}

"use client";

import { Button, Chip } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { FlaskConical, History, Pin, PinOff } from "lucide-react";
import { useState } from "react";
import { NODE_TYPES, TESTABLE_STEP_TYPES } from "@/engine";
import type { WorkflowNode } from "@/engine";
import { useNamespace } from "../../console-session";
import { useTRPC } from "../../trpc";
import { CodeEditor } from "../code-editor";
import { useEditor, useEditorStore } from "../editor-context";
import { SectionHeading } from "./node-inspector";
import { formatJson, parseJson } from "./json-text";

type JsonObject = Record<string, unknown>;

const TESTABLE: ReadonlySet<string> = new Set(TESTABLE_STEP_TYPES);

/** A JSON object typed in a field, the last valid one kept while the text is broken. */
function useJsonObject(initial: JsonObject | undefined) {
  const [text, setText] = useState(() => formatJson(initial ?? {}));
  const parsed = parseJson(text, true);
  const value = parsed.ok ? ((parsed.value as JsonObject | undefined) ?? {}) : null;
  const diagnostics = parsed.ok ? [] : [{ from: parsed.error.from, to: parsed.error.to, message: parsed.error.message, severity: "error" as const }];
  return { text, setText, value, diagnostics, error: parsed.ok ? null : parsed.error.message };
}

/**
 * Under a node's inspector: **Test step** runs this one node on sample data
 * (server/definitions/test-step.ts) and shows its output or error, and
 * **Pinned output** holds the output its downstream nodes read when they are
 * tested — typed by hand, or pinned from a test's result. Pins are saved with
 * the definition and never used by a run.
 *
 * **Pin from last run** takes the node's output from the newest run of this
 * workflow that completed it (tRPC `stepTests.lastRunOutput`).
 */
export function StepTestPanel({ node }: { node: WorkflowNode }) {
  const namespace = useNamespace();
  const readOnly = useEditor((s) => s.readOnly);
  const pin = useEditor((s) => s.definition.pins?.[node.ref]);
  const store = useEditorStore();
  const trpc = useTRPC();
  const sample = useJsonObject({});
  const mock = useJsonObject({});
  const testable = TESTABLE.has(node.type);
  const isWorker = node.type === "SIMPLE";
  const isLlm = node.type === "LLM_CHAT_COMPLETE" || node.type === "LLM_TEXT_COMPLETE";
  const run = useMutation(trpc.stepTests.run.mutationOptions());
  // A pin set from a result replaces the pin editor's text: a new key remounts it.
  const [pinGeneration, setPinGeneration] = useState(0);
  if (NODE_TYPES[node.type].isContainer) return null;

  const test = () => {
    if (!namespace || sample.value === null || (isWorker && mock.value === null)) return;
    run.mutate({
      namespace,
      definition: store.getState().definition,
      ref: node.ref,
      sample: { input: sample.value },
      ...(isWorker && mock.value !== null ? { mockOutput: mock.value } : {}),
    });
  };
  const result = run.data;

  return (
    <div className="flex flex-col gap-4 border-t border-separator p-4" data-testid="step-test-panel">
      {testable && !readOnly ? (
        <section aria-label="Test step" className="flex flex-col gap-2">
          <SectionHeading>Test step</SectionHeading>
          <p className="text-xs text-muted">
            Runs this node alone, in the same sandbox and guards as a run, on a sample workflow input; upstream nodes&apos; outputs come from their pins.
            {isWorker ? " A worker task is not sent to a worker: it answers with the mocked output." : ""}
            {isLlm ? " A completion calls the provider for real, with its key, and spends its tokens; the key is never shown." : ""} Secrets read as ***.
          </p>
          <CodeEditor ariaLabel="Sample workflow input" language="json" maxHeight="12rem" minHeight="3rem" value={sample.text} diagnostics={sample.diagnostics} onChange={sample.setText} />
          {isWorker ? (
            <CodeEditor ariaLabel="Mocked output" language="json" maxHeight="12rem" minHeight="3rem" value={mock.text} diagnostics={mock.diagnostics} onChange={mock.setText} />
          ) : null}
          <Button isDisabled={!namespace || sample.value === null || (isWorker && mock.value === null)} isPending={run.isPending} size="sm" variant="secondary" onPress={test}>
            <FlaskConical aria-hidden className="size-4" />
            Test step
          </Button>
          {run.error ? (
            <p className="text-xs text-danger" role="alert">
              {run.error.message}
            </p>
          ) : null}
          {result ? (
            <div aria-label="Step result" className="flex flex-col gap-2" data-testid="step-result" role="region">
              <div className="flex items-center gap-2">
                <Chip color={result.status === "COMPLETED" ? "success" : "danger"} size="sm" variant="soft">
                  {result.status === "COMPLETED" ? "completed" : "failed"}
                </Chip>
                {result.mocked ? <span className="text-xs text-muted">mocked output</span> : null}
                <CallMetrics output={result.output} />
              </div>
              {result.reason ? (
                <p className="text-xs text-danger" data-testid="step-error">
                  {result.reason}
                </p>
              ) : null}
              {isLlm && typeof result.output.result === "string" ? (
                <pre aria-label="Model answer" className="max-h-64 overflow-auto rounded bg-default/40 p-2 text-xs whitespace-pre-wrap">
                  {result.output.result}
                </pre>
              ) : null}
              <CodeEditor ariaLabel="Step output" language="json" maxHeight="16rem" readOnly value={formatJson(result.output)} />
              <details className="text-xs text-muted">
                <summary className="cursor-pointer">Input the task was given</summary>
                <pre className="mt-1 overflow-auto rounded bg-default/40 p-2 font-mono">{formatJson(result.input)}</pre>
              </details>
              {result.status === "COMPLETED" ? (
                <Button
                  size="sm"
                  variant="ghost"
                  onPress={() => {
                    store.getState().setPin(node.ref, result.output);
                    setPinGeneration((g) => g + 1);
                  }}
                >
                  <Pin aria-hidden className="size-4" />
                  Pin this output
                </Button>
              ) : null}
            </div>
          ) : null}
        </section>
      ) : null}
      <PinnedOutput key={`${pin === undefined ? "none" : "pinned"}:${pinGeneration}`} nodeRef={node.ref} pin={pin} readOnly={readOnly} />
      {readOnly || !namespace ? null : <PinFromLastRun namespace={namespace} nodeRef={node.ref} onPinned={() => setPinGeneration((g) => g + 1)} />}
    </div>
  );
}

/** A completion's token usage and latency, from its output, beside the status. */
function CallMetrics({ output }: { output: JsonObject }) {
  const usage = output.tokenUsage as { promptTokens?: unknown; completionTokens?: unknown; totalTokens?: unknown } | undefined;
  const latency = output.latencyMs;
  if (typeof usage !== "object" && typeof latency !== "number") return null;
  const n = (v: unknown) => (typeof v === "number" ? v.toLocaleString() : "?");
  return (
    <span className="text-xs text-muted tabular-nums" data-testid="step-metrics">
      {typeof usage === "object" && usage !== null ? `${n(usage.totalTokens)} tokens (${n(usage.promptTokens)} in, ${n(usage.completionTokens)} out)` : null}
      {typeof usage === "object" && usage !== null && typeof latency === "number" ? " · " : null}
      {typeof latency === "number" ? `${latency.toLocaleString()} ms` : null}
    </span>
  );
}

function PinnedOutput({ nodeRef, pin, readOnly }: { nodeRef: string; pin: JsonObject | undefined; readOnly: boolean }) {
  const store = useEditorStore();
  const field = useJsonObject(pin);
  if (pin === undefined) {
    if (readOnly) return null;
    return (
      <section aria-label="Pinned output" className="flex flex-col gap-2">
        <SectionHeading>Pinned output</SectionHeading>
        <p className="text-xs text-muted">Nodes after this one read a pinned output when they are tested. Runs never use it.</p>
        <Button size="sm" variant="ghost" onPress={() => store.getState().setPin(nodeRef, {})}>
          <Pin aria-hidden className="size-4" />
          Pin an output by hand
        </Button>
      </section>
    );
  }
  return (
    <section aria-label="Pinned output" className="flex flex-col gap-2">
      <div className="flex items-center justify-between">
        <SectionHeading>Pinned output</SectionHeading>
        {readOnly ? null : (
          <Button size="sm" variant="ghost" onPress={() => store.getState().setPin(nodeRef, null)}>
            <PinOff aria-hidden className="size-4" />
            Unpin
          </Button>
        )}
      </div>
      <CodeEditor
        ariaLabel="Pinned output JSON"
        diagnostics={field.diagnostics}
        language="json"
        maxHeight="16rem"
        minHeight="3rem"
        readOnly={readOnly}
        value={field.text}
        onChange={(text) => {
          field.setText(text);
          const parsed = parseJson(text, true);
          if (parsed.ok) store.getState().setPin(nodeRef, (parsed.value as JsonObject | undefined) ?? {});
        }}
      />
      {field.error ? <p className="text-xs text-danger">{field.error}</p> : null}
    </section>
  );
}

/** Sets the pin to this node's output in the newest run of the workflow that completed it. */
function PinFromLastRun({ namespace, nodeRef, onPinned }: { namespace: string; nodeRef: string; onPinned: () => void }) {
  const store = useEditorStore();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [pending, setPending] = useState(false);
  const pinFromRun = async () => {
    const workflow = store.getState().definition.name;
    setPending(true);
    try {
      const found = await queryClient.fetchQuery({ ...trpc.stepTests.lastRunOutput.queryOptions({ namespace, workflow, ref: nodeRef }), staleTime: 0 });
      if (found === null) {
        store.getState().notify(`No run of ${workflow} has completed ${nodeRef} yet.`, "warning");
        return;
      }
      store.getState().setPin(nodeRef, found.output);
      onPinned();
      store.getState().notify(`Pinned ${nodeRef}'s output from the run of ${new Date(found.runStartedAt).toLocaleString()}.`, "success");
    } catch (error) {
      store.getState().notify(error instanceof Error ? error.message : String(error), "danger");
    } finally {
      setPending(false);
    }
  };
  return (
    <Button isPending={pending} size="sm" variant="ghost" onPress={() => void pinFromRun()}>
      <History aria-hidden className="size-4" />
      Pin from last run
    </Button>
  );
}

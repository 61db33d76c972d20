"use client";

import { Button, Chip, Description, FieldError, Input, Label, Modal, TextField } from "@heroui/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { FileJson, Upload } from "lucide-react";
import type { Route } from "next";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useState } from "react";
import { DropZone, FileTrigger } from "react-aria-components";
import { pluralize } from "../format";
import { useTRPC } from "../trpc";
import { FormAlert } from "../ui/form-alert";
import { convertImport, detectFormat, formatPath, nameProblem, parseJsonText, proposedName } from "./import-file";
import type { ImportFormat, ImportIssue } from "./import-file";

/** A workflow file bigger than this is refused before it is read: the definition limits are far below it anyway. */
const MAX_FILE_BYTES = 5 * 1024 * 1024;

const FORMAT_LABEL: Record<ImportFormat, string> = { "node-flow": "node-flow workflow", conductor: "Conductor WorkflowDef" };

/** The file as read; kept whole while the user picks a name, so nothing they chose is lost to a re-render. */
type LoadedFile =
  | { fileName: string; ok: true; value: unknown }
  | { fileName: string; ok: false; issue: ImportIssue };

/**
 * Workflows → Import: a file holding node-flow graph JSON or a Conductor
 * WorkflowDef, converted and validated in the browser by the engine, saved as
 * the next version of the chosen name, then opened in the editor. Every
 * problem is listed with where it is; the dialog never closes on one.
 */
export function ImportWorkflowDialog({
  namespace,
  isOpen,
  onOpenChange,
  existing,
}: {
  namespace: string;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  /** Latest version by name, to say when an import becomes a new version of an existing workflow. */
  existing: ReadonlyMap<string, number>;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [file, setFile] = useState<LoadedFile | null>(null);
  const [readError, setReadError] = useState<string | null>(null);
  const [name, setName] = useState("");
  const save = useMutation(
    trpc.workflows.save.mutationOptions({
      onSuccess: async (saved) => {
        await queryClient.invalidateQueries(trpc.workflows.list.pathFilter());
        onOpenChange(false);
        router.push(`/workflows/${encodeURIComponent(saved.name)}` as Route);
      },
    }),
  );
  const { reset } = save;

  useEffect(() => {
    if (!isOpen) return;
    setFile(null);
    setReadError(null);
    setName("");
    reset();
  }, [isOpen, reset]);

  async function load(picked: File | undefined) {
    if (!picked) return;
    reset();
    setReadError(null);
    if (picked.size > MAX_FILE_BYTES) {
      setReadError(`${picked.name} is ${(picked.size / 1024 / 1024).toFixed(1)} MB; a workflow file is at most 5 MB.`);
      return;
    }
    let text: string;
    try {
      text = await picked.text();
    } catch {
      setReadError(`${picked.name} could not be read.`);
      return;
    }
    const parsed = parseJsonText(text);
    const loaded: LoadedFile = parsed.ok ? { fileName: picked.name, ok: true, value: parsed.value } : { fileName: picked.name, ok: false, issue: parsed.issue };
    setFile(loaded);
    setName(loaded.ok ? proposedName(loaded.value) : "");
  }

  const trimmedName = name.trim();
  const badName = file?.ok ? nameProblem(trimmedName) : null;
  // Converted again for each name: the name is part of what is validated.
  const verdict = useMemo(() => (file?.ok && badName === null ? convertImport(file.value, trimmedName) : null), [file, badName, trimmedName]);
  const format = file?.ok ? detectFormat(file.value) : null;

  // What the server refused, in the same form as what the browser found.
  const serverIssues: ImportIssue[] = (save.error?.data?.problems ?? []).map((p) => ({
    message: p.message,
    location: p.path.length > 0 ? formatPath(p.path) : null,
    ref: p.ref ?? null,
    code: p.code,
  }));
  const issues: ImportIssue[] = !file ? [] : !file.ok ? [file.issue] : verdict && !verdict.ok ? verdict.issues : serverIssues;
  const warnings = verdict?.warnings ?? [];
  const savable = verdict?.ok === true && !save.isPending;
  const existingVersion = trimmedName ? existing.get(trimmedName) : undefined;

  return (
    <Modal.Backdrop isOpen={isOpen} onOpenChange={(open) => (save.isPending ? undefined : onOpenChange(open))}>
      <Modal.Container placement="center" scroll="inside" size="lg">
        <Modal.Dialog aria-label="Import a workflow">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>Import a workflow</Modal.Heading>
            <p className="text-sm text-muted">
              A node-flow workflow file, or a Conductor WorkflowDef: it is converted to a diagram, checked, and saved as a new version in{" "}
              <span className="font-medium text-foreground">{namespace}</span>.
            </p>
          </Modal.Header>
          <Modal.Body className="flex flex-col gap-5">
            <DropZone
              aria-label="Workflow file"
              className={({ isDropTarget, isFocusVisible }) =>
                [
                  "flex flex-col items-center gap-3 rounded-2xl border-2 border-dashed px-4 py-6 text-center outline-none transition-colors",
                  isDropTarget ? "border-accent bg-accent-soft" : "border-separator bg-surface-secondary/40",
                  isFocusVisible ? "ring-2 ring-focus" : "",
                ].join(" ")
              }
              // Operating systems label .json files inconsistently (or not at all), so any file is taken and the parse decides.
              getDropOperation={() => "copy"}
              onDrop={(event) => {
                const item = event.items.find((i) => i.kind === "file");
                if (item && item.kind === "file") void item.getFile().then(load, () => setReadError(`${item.name} could not be read.`));
              }}
            >
              <Upload aria-hidden="true" className="size-6 text-muted" />
              <p className="text-sm text-muted">
                Drop a <code className="font-mono text-[13px]">.json</code> file here, or
              </p>
              <FileTrigger acceptedFileTypes={["application/json", ".json"]} onSelect={(files) => void load(files?.[0])}>
                <Button size="sm" variant="secondary">
                  Choose a file
                </Button>
              </FileTrigger>
            </DropZone>

            <FormAlert message={readError} title="The file was not read" />

            {file ? (
              <div className="flex min-w-0 items-center gap-2 text-sm">
                <FileJson aria-hidden="true" className="size-4 shrink-0 text-muted" />
                <span className="truncate font-medium text-foreground">{file.fileName}</span>
                {format ? (
                  <Chip className="shrink-0" color="accent" size="sm" variant="soft">
                    {FORMAT_LABEL[format]}
                  </Chip>
                ) : null}
              </div>
            ) : null}

            {file?.ok ? (
              <TextField isInvalid={badName !== null} isRequired maxLength={255} name="name" value={name} onChange={setName}>
                <Label>Name</Label>
                <Input autoComplete="off" spellCheck={false} />
                {badName === null ? (
                  <Description>
                    {existingVersion !== undefined
                      ? `“${trimmedName}” exists (v${existingVersion}): the import is saved as its v${existingVersion + 1}.`
                      : "A new workflow; the name cannot change once saved."}
                  </Description>
                ) : null}
                <FieldError>{badName}</FieldError>
              </TextField>
            ) : null}

            {issues.length > 0 ? <IssueList issues={issues} title={file?.ok === false ? "The file is not valid JSON" : `${pluralize(issues.length, "problem")} to fix before it can be saved`} tone="danger" /> : null}
            <FormAlert message={serverIssues.length === 0 ? save.error?.message : null} title="The workflow was not saved" />
            {warnings.length > 0 ? <IssueList issues={warnings} title={`${pluralize(warnings.length, "change")} made while converting`} tone="warning" /> : null}
            {verdict?.ok && issues.length === 0 ? (
              <p className="text-sm text-success" role="status">
                {pluralize(verdict.definition.nodes.length, "node")} and {pluralize(verdict.definition.edges.length, "edge")}, ready to save.
              </p>
            ) : null}
          </Modal.Body>
          <Modal.Footer>
            <Button isDisabled={save.isPending} slot="close" variant="secondary">
              Cancel
            </Button>
            <Button
              isDisabled={!savable}
              isPending={save.isPending}
              onPress={() => {
                if (verdict?.ok) save.mutate({ namespace, definition: verdict.definition, message: `Imported from ${file?.fileName ?? "a file"}` });
              }}
            >
              {save.isPending ? "Saving…" : "Import and open"}
            </Button>
          </Modal.Footer>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

/** Problems or warnings, each with where it is; scrolls on its own so a long list keeps the footer in view. */
function IssueList({ issues, title, tone }: { issues: ImportIssue[]; title: string; tone: "danger" | "warning" }) {
  return (
    <section aria-label={title} className={`rounded-xl border ${tone === "danger" ? "border-danger/40" : "border-warning/40"}`}>
      <h3 className={`px-3 pt-2.5 pb-1.5 text-sm font-medium ${tone === "danger" ? "text-danger" : "text-warning"}`}>{title}</h3>
      <ul className="max-h-56 overflow-y-auto px-3 pb-2.5">
        {issues.map((issue, i) => (
          <li key={i} className="flex flex-col gap-1 border-t border-separator py-2 first:border-t-0">
            <span className="flex min-w-0 flex-wrap items-center gap-1.5">
              {issue.location ? <code className="font-mono text-xs break-all text-muted">{issue.location}</code> : <span className="text-xs text-muted">whole file</span>}
              {issue.ref ? (
                <Chip className="shrink-0" size="sm" variant="soft">
                  {issue.ref}
                </Chip>
              ) : null}
            </span>
            <span className="min-w-0 text-sm break-words text-foreground">{issue.message}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

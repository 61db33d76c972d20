"use client";

import { Alert, Button, Form, Input, Label, ListBox, Modal, Select, Skeleton, Spinner, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Key } from "react";
import { useState } from "react";
import { useNamespace } from "../../console-session";
import { HumanTaskForm } from "../../forms/human-task-form";
import { RelativeTime } from "../../relative-time";
import { useTRPC } from "../../trpc";
import type { HumanField } from "./human-form-model";

type Json = Record<string, unknown>;
export interface TemplateRef {
  name: string;
  version?: number;
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : "Something went wrong.";
}

/**
 * Save the node's inline form as a new version of a FormTemplates row, or
 * point the node at a stored template (`form.template`), or copy a template
 * back inline to edit it here ("Detach").
 */
export function FormTemplateControls({
  form,
  fields,
  readOnly,
  namespace: namespaceProp,
  onUse,
  onDetach,
}: {
  form: Json;
  fields: HumanField[] | null;
  readOnly: boolean;
  namespace?: string;
  onUse: (ref: TemplateRef) => void;
  onDetach: (schema: Json, uiSchema: Json) => void;
}) {
  const current = useNamespace();
  const namespace = namespaceProp ?? current;
  const [dialog, setDialog] = useState<"save" | "use" | null>(null);
  const template = isRecord(form.template) ? (form.template as unknown as TemplateRef) : undefined;
  const inline = isRecord(form.schema) ? form.schema : undefined;
  if (!namespace) return null;
  return (
    <div className="flex items-center gap-1">
      {template && !readOnly ? <DetachButton namespace={namespace} template={template} onDetach={onDetach} /> : null}
      {inline && !template ? (
        <Button isDisabled={(fields?.length ?? 1) === 0} size="sm" variant="ghost" onPress={() => setDialog("save")}>
          Save as template
        </Button>
      ) : null}
      {readOnly ? null : (
        <Button size="sm" variant="ghost" onPress={() => setDialog("use")}>
          Use template
        </Button>
      )}
      {dialog === "save" && inline ? (
        <SaveTemplateDialog namespace={namespace} schema={inline} uiSchema={isRecord(form.uiSchema) ? form.uiSchema : {}} onClose={() => setDialog(null)} />
      ) : null}
      {dialog === "use" ? (
        <UseTemplateDialog
          namespace={namespace}
          onClose={() => setDialog(null)}
          onUse={(ref) => {
            onUse(ref);
            setDialog(null);
          }}
        />
      ) : null}
    </div>
  );
}

function DetachButton({ namespace, template, onDetach }: { namespace: string; template: TemplateRef; onDetach: (schema: Json, uiSchema: Json) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [pending, setPending] = useState(false);
  return (
    <Button
      isPending={pending}
      size="sm"
      variant="ghost"
      onPress={async () => {
        setPending(true);
        try {
          const t = await queryClient.fetchQuery(trpc.formTemplates.get.queryOptions({ namespace, name: template.name, ...(template.version ? { version: template.version } : {}) }));
          onDetach(isRecord(t.schema) ? t.schema : { type: "object", properties: {} }, isRecord(t.uiSchema) ? t.uiSchema : {});
        } finally {
          setPending(false);
        }
      }}
    >
      Detach
    </Button>
  );
}

function SaveTemplateDialog({ namespace, schema, uiSchema, onClose }: { namespace: string; schema: Json; uiSchema: Json; onClose: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const save = useMutation(
    trpc.formTemplates.save.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.formTemplates.list.pathFilter()),
    }),
  );
  return (
    <Modal.Backdrop isOpen onOpenChange={(open) => (!open && !save.isPending ? onClose() : undefined)}>
      <Modal.Container placement="center" size="md">
        <Modal.Dialog aria-label="Save as form template">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>Save as form template</Modal.Heading>
            <p className="text-sm text-muted">A new immutable version of the template; other workflows can use it. Saving under an existing name adds its next version.</p>
          </Modal.Header>
          <Form
            className="contents"
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate({ namespace, name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}), schema, uiSchema });
            }}
          >
            <Modal.Body className="flex flex-col gap-4">
              {save.error ? (
                <Alert role="alert" status="danger">
                  <Alert.Indicator />
                  <Alert.Content>
                    <Alert.Title>Not saved</Alert.Title>
                    <Alert.Description>{save.error.message}</Alert.Description>
                  </Alert.Content>
                </Alert>
              ) : null}
              {save.data ? (
                <Alert role="status" status="success">
                  <Alert.Indicator />
                  <Alert.Content>
                    <Alert.Title>
                      Saved {save.data.name} version {save.data.version}
                    </Alert.Title>
                  </Alert.Content>
                </Alert>
              ) : null}
              <TextField autoFocus isRequired value={name} onChange={setName}>
                <Label>Template name</Label>
                <Input className="font-mono" placeholder="expense-approval" spellCheck={false} />
              </TextField>
              <TextField value={description} onChange={setDescription}>
                <Label>Description</Label>
                <Input />
              </TextField>
            </Modal.Body>
            <Modal.Footer>
              <Button variant="secondary" onPress={onClose}>
                {save.data ? "Close" : "Cancel"}
              </Button>
              <Button isDisabled={!name.trim()} isPending={save.isPending} type="submit">
                Save template
              </Button>
            </Modal.Footer>
          </Form>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

function UseTemplateDialog({ namespace, onClose, onUse }: { namespace: string; onClose: () => void; onUse: (ref: TemplateRef) => void }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.formTemplates.list.queryOptions({ namespace }));
  return (
    <Modal.Backdrop isOpen onOpenChange={(open) => (!open ? onClose() : undefined)}>
      <Modal.Container placement="center" size="md">
        <Modal.Dialog aria-label="Use a form template">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>Use a form template</Modal.Heading>
            <p className="text-sm text-muted">
              The node then renders the stored form instead of its own fields. A pinned version never changes; &ldquo;Latest&rdquo; takes whatever version is newest when each task opens.
            </p>
          </Modal.Header>
          <Modal.Body className="flex flex-col gap-3">
            {list.isPending ? <Skeleton className="h-16 rounded-lg" /> : null}
            {list.error ? <p className="text-sm text-danger">{messageOf(list.error)}</p> : null}
            {list.data && list.data.length === 0 ? <p className="text-sm text-muted">No templates yet: build a form and press Save as template.</p> : null}
            {list.data && list.data.length > 0 ? (
              <ul aria-label="Form templates" className="flex flex-col divide-y divide-separator rounded-xl border border-separator">
                {list.data.map((t) => (
                  <TemplateRow key={t.name} template={t} onUse={onUse} />
                ))}
              </ul>
            ) : null}
          </Modal.Body>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

const LATEST = "latest";

function TemplateRow({ template: t, onUse }: { template: { name: string; latestVersion: number; description: string | null; updatedAt: string }; onUse: (ref: TemplateRef) => void }) {
  // Versions are consecutive from 1 (the server numbers them under a lock), newest first here.
  const versions = Array.from({ length: t.latestVersion }, (_, i) => t.latestVersion - i);
  const [choice, setChoice] = useState<string>(String(t.latestVersion));
  return (
    <li className="flex flex-wrap items-center gap-2 px-3 py-2">
      <div className="min-w-0 flex-1">
        <p className="truncate font-mono text-sm text-foreground">{t.name}</p>
        <p className="truncate text-xs text-muted">
          v{t.latestVersion} · <RelativeTime iso={t.updatedAt} />
          {t.description ? ` · ${t.description}` : ""}
        </p>
      </div>
      <Select aria-label={`Version of ${t.name}`} className="w-32" value={choice} onChange={(key: Key | null) => setChoice(String(key ?? t.latestVersion))}>
        <Select.Trigger>
          <Select.Value />
          <Select.Indicator />
        </Select.Trigger>
        <Select.Popover>
          <ListBox>
            <ListBox.Item id={LATEST} textValue="Latest">
              Latest
              <ListBox.ItemIndicator />
            </ListBox.Item>
            {versions.map((v) => (
              <ListBox.Item key={v} id={String(v)} textValue={`Version ${v}`}>
                Version {v}
                <ListBox.ItemIndicator />
              </ListBox.Item>
            ))}
          </ListBox>
        </Select.Popover>
      </Select>
      <Button aria-label={`Use ${t.name}`} size="sm" variant="secondary" onPress={() => onUse(choice === LATEST ? { name: t.name } : { name: t.name, version: Number(choice) })}>
        Use
      </Button>
    </li>
  );
}

/** The preview of a node that uses a stored template: the template's form, fetched. */
export function TemplateFormPreview({ template, outcomes, namespace: namespaceProp, onResult }: { template: TemplateRef; outcomes: readonly string[]; namespace?: string; onResult: (r: string) => void }) {
  const current = useNamespace();
  const namespace = namespaceProp ?? current ?? "";
  const trpc = useTRPC();
  const got = useQuery(trpc.formTemplates.get.queryOptions({ namespace, name: template.name, ...(template.version ? { version: template.version } : {}) }, { enabled: namespace !== "" }));
  if (got.isPending) return <Spinner size="sm" />;
  if (got.error) return <p className="text-sm text-danger">{messageOf(got.error)}</p>;
  return (
    <HumanTaskForm
      idPrefix="preview"
      outcomes={outcomes}
      schema={isRecord(got.data.schema) ? got.data.schema : { type: "object", properties: {} }}
      uiSchema={isRecord(got.data.uiSchema) ? got.data.uiSchema : {}}
      onSubmit={(outcome, data) => onResult(`${outcome ? `${outcome}: ` : ""}${JSON.stringify(data)}`)}
    />
  );
}

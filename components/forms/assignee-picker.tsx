"use client";

import { Input, TextField } from "@heroui/react";
import { OptionSelect } from "../option-select";
import type { AssigneeKind } from "./assignee-text";
import { ASSIGNEE_KINDS, ASSIGNEE_ROLES, formatAssignee, parseAssignee } from "./assignee-text";

const KIND_LABELS: Readonly<Record<AssigneeKind, string>> = { anyone: "Anyone", user: "User", group: "Group", role: "Role", expression: "Expression" };

/** Who a task is for: a kind, then the email, group name, role or expression. */
export function AssigneePicker({
  label,
  value,
  readOnly,
  onChange,
  allowExpression = true,
}: {
  label: string;
  value: string | undefined;
  readOnly: boolean;
  onChange: (text: string | undefined, coalesce: boolean) => void;
  /** Off where nothing resolves `${…}` (a reassignment is taken literally). */
  allowExpression?: boolean;
}) {
  const parsed = parseAssignee(value);
  const kind = parsed.kind;
  return (
    <div aria-label={label} className="flex flex-col gap-1.5" role="group">
      <span className="text-sm font-medium text-foreground">{label}</span>
      <div className="flex gap-2">
        <OptionSelect
          ariaLabel={`${label} kind`}
          className="w-32 shrink-0"
          isDisabled={readOnly}
          options={ASSIGNEE_KINDS.filter((k) => allowExpression || k !== "expression").map((k) => ({ id: k, label: KIND_LABELS[k] }))}
          value={kind}
          onChange={(next) => {
            const keep = next === "role" ? (ASSIGNEE_ROLES as readonly string[]).includes(parsed.value) ? parsed.value : "operator" : next === "expression" ? (value ?? "") : kind === "role" ? "" : parsed.value;
            onChange(formatAssignee(next, keep), false);
          }}
        />
        {kind === "role" ? (
          <OptionSelect
            ariaLabel={`${label} role`}
            className="min-w-0 flex-1"
            isDisabled={readOnly}
            options={ASSIGNEE_ROLES.map((r) => ({ id: r, label: r }))}
            value={parsed.value}
            onChange={(role) => onChange(formatAssignee("role", role), false)}
          />
        ) : kind === "anyone" ? (
          <p className="self-center text-xs text-muted">Anyone in the namespace can claim it.</p>
        ) : (
          <TextField aria-label={kind === "user" ? `${label} email` : kind === "group" ? `${label} group` : `${label} expression`} className="min-w-0 flex-1" isReadOnly={readOnly} value={parsed.value} onChange={(v) => onChange(formatAssignee(kind, v), true)}>
            <Input placeholder={kind === "user" ? "ada@example.com or ${workflow.input.manager}" : kind === "group" ? "Finance" : "user:${workflow.input.manager}"} spellCheck={false} />
          </TextField>
        )}
      </div>
    </div>
  );
}

"use client";

import { Description, FieldError, Label, ListBox, Select } from "@heroui/react";
import type { Key } from "react";
import type { NamespaceRole } from "@/server/auth/principal";
import { ROLE_OPTIONS } from "./role-options";

/** One namespace role, each option with what it allows. */
export function RoleSelect({
  value,
  onChange,
  label,
  ariaLabel,
  name,
  isDisabled,
  className,
}: {
  value: NamespaceRole;
  onChange: (role: NamespaceRole) => void;
  /** A visible label; without one, `ariaLabel` names the control. */
  label?: string;
  ariaLabel?: string;
  name?: string;
  isDisabled?: boolean;
  className?: string;
}) {
  return (
    <Select
      aria-label={label ? undefined : ariaLabel}
      className={className}
      isDisabled={isDisabled}
      name={name}
      value={value}
      onChange={(key: Key | null) => {
        const role = ROLE_OPTIONS.find((r) => r.id === key)?.id;
        if (role && role !== value) onChange(role);
      }}
    >
      {label ? <Label>{label}</Label> : null}
      <Select.Trigger>
        <Select.Value />
        <Select.Indicator />
      </Select.Trigger>
      <Select.Popover className="min-w-64">
        <ListBox>
          {ROLE_OPTIONS.map((role) => (
            <ListBox.Item key={role.id} id={role.id} textValue={role.label}>
              <div className="flex flex-col">
                <Label>{role.label}</Label>
                <Description>{role.detail}</Description>
              </div>
              <ListBox.ItemIndicator />
            </ListBox.Item>
          ))}
        </ListBox>
      </Select.Popover>
      {label ? <FieldError /> : null}
    </Select>
  );
}

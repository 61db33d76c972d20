"use client";

import { Checkbox, CheckboxGroup, Description, FieldError, Label } from "@heroui/react";
import type { NamespaceRole } from "@/server/auth/principal";
import { ROLE_OPTIONS } from "./role-options";

/** The roles a group grants in its namespace; its members get the strongest of them (and of their own). */
export function RoleCheckboxes({ value, onChange }: { value: NamespaceRole[]; onChange: (roles: NamespaceRole[]) => void }) {
  return (
    <CheckboxGroup
      name="roles"
      value={value}
      onChange={(values) => onChange(ROLE_OPTIONS.map((r) => r.id).filter((id) => values.includes(id)))}
    >
      <Label>Roles</Label>
      <Description>Members get the strongest role checked here, on top of any role of their own.</Description>
      {ROLE_OPTIONS.map((role) => (
        <Checkbox key={role.id} value={role.id}>
          <Checkbox.Content>
            <Checkbox.Control>
              <Checkbox.Indicator />
            </Checkbox.Control>
            {role.label}
          </Checkbox.Content>
          <Description>{role.detail}</Description>
        </Checkbox>
      ))}
      <FieldError />
    </CheckboxGroup>
  );
}

"use client";

import { Label, ListBox, Select } from "@heroui/react";
import type { Key } from "react";
import { useConsoleSession } from "./console-session";

/**
 * Which namespace the console shows: the ones the user can see, each with
 * their role there. The choice is remembered in a cookie (namespace-choice.ts).
 */
export function NamespaceSwitcher({ className }: { className?: string }) {
  const { namespaces, namespace, setNamespace } = useConsoleSession();

  if (namespaces.length === 0) {
    return (
      <div className={className}>
        <p className="text-xs font-medium text-muted">Namespace</p>
        <p className="mt-1 text-sm text-muted">None yet: an admin adds you to one.</p>
      </div>
    );
  }

  return (
    <Select
      className={className}
      value={namespace}
      onChange={(key: Key | null) => {
        if (key !== null && String(key) !== namespace) setNamespace(String(key));
      }}
    >
      <Label className="text-xs text-muted">Namespace</Label>
      <Select.Trigger>
        <Select.Value>{({ selectedText }) => <span className="truncate font-medium">{selectedText}</span>}</Select.Value>
        <Select.Indicator />
      </Select.Trigger>
      <Select.Popover>
        <ListBox aria-label="Namespaces">
          {namespaces.map((n) => (
            <ListBox.Item key={n.id} id={n.name} textValue={n.name}>
              <div className="flex min-w-0 flex-1 flex-col">
                <span className="truncate">{n.name}</span>
                <span className="text-xs text-muted">{n.role ?? "no role"}</span>
              </div>
              <ListBox.ItemIndicator />
            </ListBox.Item>
          ))}
        </ListBox>
      </Select.Popover>
    </Select>
  );
}

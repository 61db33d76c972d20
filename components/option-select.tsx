"use client";

import { Label, ListBox, Select } from "@heroui/react";
import type { Key } from "react";

export interface SelectOption<T extends string> {
  id: T;
  label: string;
}

/**
 * A HeroUI Select over a fixed list of string options: the trigger, popover
 * and list every plain choice in the app draws the same way. `label` is shown
 * above it; without one, `ariaLabel` names it for assistive technology.
 */
export function OptionSelect<T extends string>({
  label,
  ariaLabel,
  className,
  isDisabled,
  value,
  options,
  onChange,
}: {
  label?: string;
  ariaLabel?: string;
  className?: string;
  isDisabled?: boolean;
  value: T | null;
  options: readonly SelectOption<T>[];
  onChange: (value: T) => void;
}) {
  return (
    <Select
      aria-label={label === undefined ? ariaLabel : undefined}
      className={className}
      isDisabled={isDisabled}
      value={value}
      onChange={(key: Key | null) => {
        if (key !== null) onChange(String(key) as T);
      }}
    >
      {label === undefined ? null : <Label>{label}</Label>}
      <Select.Trigger>
        <Select.Value />
        <Select.Indicator />
      </Select.Trigger>
      <Select.Popover>
        <ListBox>
          {options.map((o) => (
            <ListBox.Item key={o.id} id={o.id} textValue={o.label}>
              {o.label}
              <ListBox.ItemIndicator />
            </ListBox.Item>
          ))}
        </ListBox>
      </Select.Popover>
    </Select>
  );
}

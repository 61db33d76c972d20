"use client";

import { Button, Description, FieldError, InputGroup, Label, Meter, TextField } from "@heroui/react";
import type { ReactNode } from "react";
import { useState } from "react";
import { EyeIcon, EyeOffIcon } from "./icons";
import { estimatePasswordStrength } from "./password-strength";

/**
 * A password input with a show/hide toggle. With `minLength` it is a new
 * password: a strength hint under it while typing (the server's policy still
 * decides, and its refusal appears in the field's FieldError).
 */
export function PasswordField({
  name,
  label,
  value,
  onChange,
  autoComplete,
  description,
  minLength,
  autoFocus,
  isRequired = true,
  visible: controlledVisible,
  onVisibleChange,
}: {
  name: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  autoComplete: "current-password" | "new-password";
  description?: ReactNode;
  minLength?: number;
  autoFocus?: boolean;
  isRequired?: boolean;
  /** Controlled show/hide, for a form that reveals a password it generated. */
  visible?: boolean;
  onVisibleChange?: (visible: boolean) => void;
}) {
  const [ownVisible, setOwnVisible] = useState(false);
  const visible = controlledVisible ?? ownVisible;
  const setVisible = onVisibleChange ?? setOwnVisible;
  const strength = minLength !== undefined && value !== "" ? estimatePasswordStrength(value, minLength) : null;

  return (
    <TextField autoComplete={autoComplete} autoFocus={autoFocus} isRequired={isRequired} name={name} type={visible ? "text" : "password"} value={value} onChange={onChange}>
      <Label>{label}</Label>
      <InputGroup>
        <InputGroup.Input spellCheck={false} />
        <InputGroup.Suffix className="pr-1">
          <Button
            aria-label={visible ? `Hide ${label.toLowerCase()}` : `Show ${label.toLowerCase()}`}
            aria-pressed={visible}
            isIconOnly
            size="sm"
            variant="ghost"
            onPress={() => setVisible(!visible)}
          >
            {visible ? <EyeOffIcon className="size-4" /> : <EyeIcon className="size-4" />}
          </Button>
        </InputGroup.Suffix>
      </InputGroup>
      {strength ? (
        <Meter aria-label="Password strength" className="mt-1 gap-1" color={strength.color} maxValue={4} size="sm" value={Math.max(strength.score, 0.4)}>
          <Meter.Track>
            <Meter.Fill />
          </Meter.Track>
          <span aria-live="polite" className="text-xs text-muted">
            {strength.label}
          </span>
        </Meter>
      ) : null}
      {description ? <Description>{description}</Description> : null}
      <FieldError />
    </TextField>
  );
}

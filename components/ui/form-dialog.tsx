"use client";

import { Button, Form, Modal } from "@heroui/react";
import type { ComponentProps, ReactNode } from "react";

type ValidationErrors = ComponentProps<typeof Form>["validationErrors"];

/**
 * A dialog that is one form: heading and a line of context, the fields, then
 * Cancel and the submit button, which shows `pendingLabel` while the request
 * runs. The caller keeps the state and the mutation; it puts a FormAlert
 * first among the children for an error that belongs to no one field, and
 * closes the dialog on success.
 */
export function FormDialog({
  isOpen,
  onOpenChange,
  title,
  label = typeof title === "string" ? title : undefined,
  description,
  size = "md",
  validationErrors,
  validationBehavior,
  onSubmit,
  submitLabel,
  pendingLabel,
  isPending,
  isSubmitDisabled,
  bodyClassName,
  children,
}: {
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  /** The dialog's accessible name, when the heading is not a plain string. */
  label?: string;
  description?: ReactNode;
  size?: "sm" | "md" | "lg";
  validationErrors?: ValidationErrors;
  validationBehavior?: "aria" | "native";
  onSubmit: () => void;
  submitLabel: string;
  pendingLabel: string;
  isPending: boolean;
  isSubmitDisabled?: boolean;
  /** Added to the body's classes (a little more room under a long description). */
  bodyClassName?: string;
  children: ReactNode;
}) {
  return (
    <Modal.Backdrop isOpen={isOpen} onOpenChange={onOpenChange}>
      <Modal.Container placement="center" scroll="inside" size={size}>
        <Modal.Dialog aria-label={label}>
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>{title}</Modal.Heading>
            {description ? <p className="text-sm text-muted">{description}</p> : null}
          </Modal.Header>
          <Form
            className="contents"
            // Spread, not passed as undefined: React Aria merges an undefined prop over what a context provides.
            {...(validationBehavior ? { validationBehavior } : {})}
            {...(validationErrors ? { validationErrors } : {})}
            onSubmit={(event) => {
              event.preventDefault();
              onSubmit();
            }}
          >
            <Modal.Body className={bodyClassName ? `${bodyClassName} flex flex-col gap-5` : "flex flex-col gap-5"}>{children}</Modal.Body>
            <Modal.Footer>
              <Button slot="close" variant="secondary">
                Cancel
              </Button>
              <Button {...(isSubmitDisabled === undefined ? {} : { isDisabled: isSubmitDisabled })} isPending={isPending} type="submit">
                {isPending ? pendingLabel : submitLabel}
              </Button>
            </Modal.Footer>
          </Form>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

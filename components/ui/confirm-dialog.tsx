"use client";

import { AlertDialog, Button } from "@heroui/react";
import type { ReactNode } from "react";

/**
 * "Are you sure?" before an action that cannot be taken back (revoke, delete,
 * disable, terminate, leave unsaved). Stays open while the request runs and
 * shows its error in place, so a failure is never mistaken for success; the
 * caller closes it on success. While pending, neither Cancel nor the backdrop
 * closes it: the request is already on its way.
 */
export function ConfirmDialog({
  isOpen,
  onOpenChange,
  title,
  children,
  confirmLabel,
  pendingLabel = confirmLabel,
  cancelLabel = "Cancel",
  tone = "danger",
  confirmVariant = tone === "danger" ? "danger" : "primary",
  isPending = false,
  error = null,
  onConfirm,
}: {
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  /** The confirm button's label while the request runs ("Revoking…"). */
  pendingLabel?: string;
  cancelLabel?: string;
  /** The icon, and by default the confirm button: danger for what cannot be undone, warning for what can. */
  tone?: "danger" | "warning";
  /** For a warning whose way out still destroys something (discarding unsaved changes). */
  confirmVariant?: "danger" | "primary";
  isPending?: boolean;
  error?: string | null;
  onConfirm: () => void;
}) {
  return (
    <AlertDialog.Backdrop isOpen={isOpen} onOpenChange={(open) => (isPending ? undefined : onOpenChange(open))}>
      <AlertDialog.Container placement="center" size="sm">
        <AlertDialog.Dialog>
          <AlertDialog.Header>
            <AlertDialog.Icon status={tone} />
            <AlertDialog.Heading>{title}</AlertDialog.Heading>
          </AlertDialog.Header>
          <AlertDialog.Body className="flex flex-col gap-3 text-sm">
            {children}
            {error ? (
              <p className="rounded-lg bg-danger-soft px-3 py-2 text-danger-soft-foreground" role="alert">
                {error}
              </p>
            ) : null}
          </AlertDialog.Body>
          <AlertDialog.Footer>
            <Button isDisabled={isPending} slot="close" variant="tertiary">
              {cancelLabel}
            </Button>
            <Button isPending={isPending} variant={confirmVariant} onPress={onConfirm}>
              {isPending ? pendingLabel : confirmLabel}
            </Button>
          </AlertDialog.Footer>
        </AlertDialog.Dialog>
      </AlertDialog.Container>
    </AlertDialog.Backdrop>
  );
}

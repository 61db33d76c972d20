"use client";

import { AlertDialog, Button } from "@heroui/react";
import type { ReactNode } from "react";

/**
 * A confirmation for an action that cannot be taken back (revoke, rotate,
 * disable). Stays open while the request runs and shows its error in place,
 * so a failure is never mistaken for success; the caller closes it on success.
 */
export function ConfirmActionDialog({
  isOpen,
  onOpenChange,
  title,
  children,
  confirmLabel,
  pendingLabel,
  status = "danger",
  isPending,
  error,
  onConfirm,
}: {
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  pendingLabel: string;
  status?: "danger" | "warning";
  isPending: boolean;
  error: string | null;
  onConfirm: () => void;
}) {
  return (
    <AlertDialog.Backdrop isOpen={isOpen} onOpenChange={(open) => (isPending ? undefined : onOpenChange(open))}>
      <AlertDialog.Container placement="center" size="sm">
        <AlertDialog.Dialog>
          <AlertDialog.Header>
            <AlertDialog.Icon status={status} />
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
              Cancel
            </Button>
            <Button isPending={isPending} variant={status === "danger" ? "danger" : "primary"} onPress={onConfirm}>
              {isPending ? pendingLabel : confirmLabel}
            </Button>
          </AlertDialog.Footer>
        </AlertDialog.Dialog>
      </AlertDialog.Container>
    </AlertDialog.Backdrop>
  );
}

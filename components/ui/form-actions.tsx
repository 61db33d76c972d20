import { Button } from "@heroui/react";

/** The foot of an inline form: Cancel, then the submit button (pending while the save runs). */
export function FormActions({ onCancel, isPending, submitLabel }: { onCancel: () => void; isPending: boolean; submitLabel: string }) {
  return (
    <div className="flex justify-end gap-2">
      <Button variant="tertiary" onPress={onCancel}>
        Cancel
      </Button>
      <Button isPending={isPending} type="submit">
        {submitLabel}
      </Button>
    </div>
  );
}

/** A table row's Edit and Delete buttons, named after the row for screen readers (`Edit nightly`). */
export function EditDeleteButtons({ name, onEdit, onDelete }: { name: string; onEdit: () => void; onDelete: () => void }) {
  return (
    <>
      <Button aria-label={`Edit ${name}`} size="sm" variant="ghost" onPress={onEdit}>
        Edit
      </Button>
      <Button aria-label={`Delete ${name}`} size="sm" variant="ghost" onPress={onDelete}>
        Delete
      </Button>
    </>
  );
}

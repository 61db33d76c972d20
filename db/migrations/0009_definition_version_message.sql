-- The optional message a person gives when saving a version ("added the
-- refund branch"), shown in the editor's version history. Nullable: versions
-- saved before this column, and saves through REST or Conductor, have none.
-- Bounded like a commit subject plus body, so a pasted document cannot bloat
-- every history listing; the tRPC input holds it to the same limit.
ALTER TABLE "WorkflowDefinitions" ADD COLUMN "message" TEXT NULL
  CONSTRAINT "WorkflowDefinitions_message_length" CHECK (char_length("message") <= 2000);

"use client";

import { Alert, Button, Description, Form, Kbd, Label, Modal, TextArea, TextField } from "@heroui/react";
import { useEffect, useState } from "react";
import type { Problem } from "@/engine";
import { GESTURES, SHORTCUTS } from "./shortcuts";

/** Asks for the optional save message; shows the server's refusal in place. */
export function SaveDialog({
  isOpen,
  onOpenChange,
  name,
  nextVersionHint,
  isPending,
  error,
  serverProblems,
  onSave,
}: {
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  name: string;
  nextVersionHint: string;
  isPending: boolean;
  error: string | null;
  serverProblems: readonly Problem[];
  onSave: (message: string) => void;
}) {
  const [message, setMessage] = useState("");
  useEffect(() => {
    if (isOpen) setMessage("");
  }, [isOpen]);
  return (
    <Modal.Backdrop isOpen={isOpen} onOpenChange={(open) => (isPending ? undefined : onOpenChange(open))}>
      <Modal.Container placement="center" size="md">
        <Modal.Dialog aria-label="Save a new version">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>Save {name}</Modal.Heading>
            <p className="text-sm text-muted">{nextVersionHint} Versions never change once saved; runs keep the version they started on.</p>
          </Modal.Header>
          <Form
            className="contents"
            onSubmit={(event) => {
              event.preventDefault();
              onSave(message.trim());
            }}
          >
            <Modal.Body className="flex flex-col gap-4">
              {error ? (
                <Alert role="alert" status="danger">
                  <Alert.Indicator />
                  <Alert.Content>
                    <Alert.Title>Not saved</Alert.Title>
                    <Alert.Description>
                      {error}
                      {serverProblems.length > 0 ? (
                        <ul className="mt-1 list-disc pl-4">
                          {serverProblems.slice(0, 8).map((p, i) => (
                            <li key={i}>
                              {p.ref ? <code className="font-mono">{p.ref}</code> : null} {p.message}
                            </li>
                          ))}
                        </ul>
                      ) : null}
                    </Alert.Description>
                  </Alert.Content>
                </Alert>
              ) : null}
              <TextField autoFocus maxLength={2000} name="message" value={message} onChange={setMessage}>
                <Label>Message (optional)</Label>
                <TextArea placeholder="What changed, e.g. “Retry the charge twice before giving up”" rows={3} />
                <Description>Shown in the version history.</Description>
              </TextField>
            </Modal.Body>
            <Modal.Footer>
              <Button isDisabled={isPending} slot="close" variant="secondary">
                Cancel
              </Button>
              <Button isPending={isPending} type="submit">
                {isPending ? "Saving…" : "Save version"}
              </Button>
            </Modal.Footer>
          </Form>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

function KeyCombo({ combo, mac }: { combo: string; mac: boolean }) {
  const parts = combo === "?" ? ["?"] : combo.split("+");
  return (
    <span className="inline-flex items-center gap-0.5">
      {parts.map((p, i) => (
        <Kbd key={i}>{p === "Mod" ? (mac ? "⌘" : "Ctrl") : p}</Kbd>
      ))}
    </span>
  );
}

/** Every shortcut and gesture, from the same list the key handler uses. */
export function ShortcutsDialog({ isOpen, onOpenChange, mac }: { isOpen: boolean; onOpenChange: (open: boolean) => void; mac: boolean }) {
  return (
    <Modal.Backdrop isOpen={isOpen} onOpenChange={onOpenChange}>
      <Modal.Container placement="center" scroll="inside" size="lg">
        <Modal.Dialog aria-label="Keyboard shortcuts">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>Keyboard shortcuts</Modal.Heading>
          </Modal.Header>
          <Modal.Body className="flex flex-col gap-5">
            <table className="w-full text-sm">
              <tbody>
                {SHORTCUTS.map((s) => (
                  <tr key={s.action} className="border-b border-separator last:border-0">
                    <td className="py-1.5 pr-4 text-foreground">{s.description}</td>
                    <td className="py-1.5 text-right whitespace-nowrap">
                      {s.keys.map((k, i) => (
                        <span key={k}>
                          {i > 0 ? <span className="px-1 text-muted">or</span> : null}
                          <KeyCombo combo={k} mac={mac} />
                        </span>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <div>
              <h3 className="pb-1 text-xs font-semibold tracking-wide text-muted uppercase">With the pointer</h3>
              <table className="w-full text-sm">
                <tbody>
                  {GESTURES.map((g) => (
                    <tr key={g.gesture} className="border-b border-separator last:border-0">
                      <td className="py-1.5 pr-4 font-medium whitespace-nowrap text-foreground">{g.gesture}</td>
                      <td className="py-1.5 text-muted">{g.description}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Modal.Body>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

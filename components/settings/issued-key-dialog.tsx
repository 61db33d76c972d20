"use client";

import { Alert, Button, Input, Label, Modal, TextField } from "@heroui/react";
import { useEffect, useRef, useState } from "react";

export interface IssuedKey {
  /** "API key created" or "API key rotated". */
  title: string;
  name: string;
  key: string;
  /** Set after a rotation: the prefix of the key that just stopped working. */
  replacedPrefix?: string;
}

type CopyState = "idle" | "copied" | "manual";

/**
 * Shows a freshly minted key, the only time it is ever shown: the server keeps
 * only its hash. The dialog closes only through its button — no backdrop click
 * or Escape — so a stray click cannot lose a key nobody has copied yet.
 */
export function IssuedKeyDialog({ issued, onClose }: { issued: IssuedKey | null; onClose: () => void }) {
  const [copy, setCopy] = useState<CopyState>("idle");
  const inputRef = useRef<HTMLInputElement>(null);

  // A new key starts with a fresh copy state.
  useEffect(() => setCopy("idle"), [issued?.key]);

  async function copyKey() {
    if (!issued) return;
    try {
      // Absent outside a secure context (plain http on a LAN address).
      await navigator.clipboard.writeText(issued.key);
      setCopy("copied");
    } catch {
      inputRef.current?.focus();
      inputRef.current?.select();
      setCopy("manual");
    }
  }

  return (
    <Modal.Backdrop isDismissable={false} isKeyboardDismissDisabled isOpen={issued !== null} onOpenChange={(open) => (open ? undefined : onClose())}>
      <Modal.Container placement="center" size="lg">
        <Modal.Dialog aria-label={issued?.title ?? "API key"}>
          {issued ? (
            <>
              <Modal.Header>
                <Modal.Heading>{issued.title}</Modal.Heading>
                <p className="text-sm text-muted">
                  <span className="font-medium text-foreground">{issued.name}</span>
                  {issued.replacedPrefix ? (
                    <>
                      {" "}
                      replaces <code className="font-mono text-[13px]">nf_{issued.replacedPrefix}_…</code>, which no longer works.
                    </>
                  ) : null}
                </p>
              </Modal.Header>
              <Modal.Body className="flex flex-col gap-4">
                <Alert status="warning">
                  <Alert.Indicator />
                  <Alert.Content>
                    <Alert.Title>Copy this key now. It will not be shown again.</Alert.Title>
                    <Alert.Description>
                      Only a hash is stored. If you lose it, rotate the key and update whoever used it.
                    </Alert.Description>
                  </Alert.Content>
                </Alert>
                <TextField isReadOnly value={issued.key}>
                  <Label>API key</Label>
                  <div className="flex flex-col gap-2 sm:flex-row">
                    <Input
                      ref={inputRef}
                      className="min-w-0 flex-1 font-mono text-[13px]"
                      spellCheck={false}
                      onFocus={(event) => event.currentTarget.select()}
                    />
                    <Button className="shrink-0" variant={copy === "copied" ? "secondary" : "primary"} onPress={() => void copyKey()}>
                      {copy === "copied" ? "Copied" : "Copy key"}
                    </Button>
                  </div>
                </TextField>
                <p aria-live="polite" className="min-h-5 text-xs text-muted">
                  {copy === "manual"
                    ? "This browser blocked the clipboard here. The key is selected: press Ctrl+C (⌘C on a Mac)."
                    : "Send it as the header Authorization: Bearer <key>."}
                </p>
              </Modal.Body>
              <Modal.Footer>
                <Button slot="close" variant={copy === "copied" ? "primary" : "secondary"}>
                  {copy === "copied" ? "Done" : "I have saved the key"}
                </Button>
              </Modal.Footer>
            </>
          ) : null}
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

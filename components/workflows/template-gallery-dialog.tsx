"use client";

import { Chip, Modal } from "@heroui/react";
import type { Route } from "next";
import Link from "next/link";
import { WORKFLOW_TEMPLATES } from "@/engine";

/**
 * Workflows → New from template: the gallery. A card opens the editor on a
 * copy of the template (`/workflows/new?template=<id>`), unsaved, so nothing
 * is stored until the first save and the name can be changed first.
 */
export function TemplateGalleryDialog({ isOpen, onOpenChange }: { isOpen: boolean; onOpenChange: (open: boolean) => void }) {
  return (
    <Modal.Backdrop isOpen={isOpen} onOpenChange={onOpenChange}>
      <Modal.Container placement="center" scroll="inside" size="lg">
        <Modal.Dialog aria-label="New from template">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>New from template</Modal.Heading>
            <p className="text-sm text-muted">Start from a working diagram; each opens as a new, unsaved workflow.</p>
          </Modal.Header>
          <Modal.Body>
            <ul aria-label="Templates" className="grid gap-3 sm:grid-cols-2">
              {WORKFLOW_TEMPLATES.map((t) => (
                <li key={t.id}>
                  <Link
                    aria-label={`Use template ${t.title}`}
                    className="flex h-full flex-col gap-2 rounded-xl border border-separator p-3 transition-colors hover:border-accent hover:bg-accent-soft/30"
                    href={`/workflows/new?template=${encodeURIComponent(t.id)}` as Route}
                  >
                    <span className="text-sm font-medium text-foreground">{t.title}</span>
                    <span className="text-xs text-muted">{t.summary}</span>
                    <span className="mt-auto flex flex-wrap gap-1">
                      {t.features.map((f) => (
                        <Chip key={f} size="sm" variant="soft">
                          {f}
                        </Chip>
                      ))}
                    </span>
                  </Link>
                </li>
              ))}
            </ul>
          </Modal.Body>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

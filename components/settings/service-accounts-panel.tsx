"use client";

import { Alert, Button, Card, Chip, Description, FieldError, Form, Input, Label, Modal, Skeleton, Table, TextArea, TextField } from "@heroui/react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useEffect, useState } from "react";
import type { AppRouter } from "@/server/trpc/routers/_app";
import { pluralize } from "../format";
import { RelativeTime } from "../relative-time";
import { useTRPC } from "../trpc";
import { ConfirmActionDialog } from "./confirm-action-dialog";
import { PlusIcon, ServiceAccountIcon } from "../icons";

type ServiceAccount = inferRouterOutputs<AppRouter>["apiKeys"]["serviceAccounts"]["list"][number];

/**
 * Service accounts: owners for keys that belong to a system rather than a
 * person. Disabling one refuses all of its keys at once (they are not revoked
 * one by one), and cannot be undone here.
 */
export function ServiceAccountsPanel({ namespace }: { namespace: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const accounts = useQuery(trpc.apiKeys.serviceAccounts.list.queryOptions({ namespace }));
  const [creating, setCreating] = useState(false);
  const [disabling, setDisabling] = useState<ServiceAccount | null>(null);

  const disable = useMutation(
    trpc.apiKeys.serviceAccounts.disable.mutationOptions({
      onSuccess: async () => {
        setDisabling(null);
        // Key statuses change too ("Owner disabled"), so the whole apiKeys tree is refetched.
        await queryClient.invalidateQueries(trpc.apiKeys.pathFilter());
      },
    }),
  );

  return (
    <Card aria-labelledby="service-accounts-heading" className="gap-0 p-0" role="region">
      <div className="flex flex-col gap-3 border-b border-separator px-5 py-4 sm:flex-row sm:items-start">
        <div className="flex min-w-0 flex-1 items-start gap-3">
          <span className="mt-0.5 flex size-8 shrink-0 items-center justify-center rounded-lg bg-accent-soft text-accent">
            <ServiceAccountIcon className="size-[18px]" />
          </span>
          <div className="min-w-0">
            <h2 className="text-base font-semibold tracking-tight text-foreground" id="service-accounts-heading">
              Service accounts
            </h2>
            <p className="text-sm text-muted">Owners for keys used by systems, so a key does not leave with the person who created it.</p>
          </div>
        </div>
        <Button className="self-end sm:self-auto" size="sm" variant="secondary" onPress={() => setCreating(true)}>
          <PlusIcon className="size-4" />
          New service account
        </Button>
      </div>

      {accounts.isError && !accounts.data ? (
        <div className="p-5">
          <Alert status="danger">
            <Alert.Indicator />
            <Alert.Content>
              <Alert.Title>Service accounts could not be loaded</Alert.Title>
              <Alert.Description>{accounts.error.message}</Alert.Description>
            </Alert.Content>
            <Button size="sm" variant="danger-soft" onPress={() => void accounts.refetch()}>
              Try again
            </Button>
          </Alert>
        </div>
      ) : accounts.isPending ? (
        <div aria-busy="true" aria-label="Loading service accounts" className="flex flex-col gap-3 p-5">
          {[0, 1].map((i) => (
            <Skeleton key={i} className="h-4 w-48 rounded-md" />
          ))}
        </div>
      ) : accounts.data.length === 0 ? (
        <p className="px-5 py-6 text-sm text-muted">None yet. Keys created for “You” act for your own account.</p>
      ) : (
        <Table className="rounded-none border-0 shadow-none">
          <Table.ScrollContainer>
            <Table.Content aria-label="Service accounts">
              <Table.Header>
                <Table.Column isRowHeader>Name</Table.Column>
                <Table.Column className="hidden w-28 sm:table-cell">Active keys</Table.Column>
                <Table.Column className="hidden w-28 md:table-cell">Created</Table.Column>
                <Table.Column className="hidden w-28 sm:table-cell">Status</Table.Column>
                <Table.Column className="w-28 text-right">
                  <span className="sr-only">Actions</span>
                </Table.Column>
              </Table.Header>
              <Table.Body>
                {accounts.data.map((account) => (
                  <Table.Row key={account.id} id={account.id}>
                    <Table.Cell>
                      <div className="flex min-w-0 flex-col gap-0.5 py-0.5">
                        <span className="truncate font-medium text-foreground">{account.name}</span>
                        {account.description ? <span className="line-clamp-2 text-[13px] text-muted">{account.description}</span> : null}
                        <span className="text-xs text-muted sm:hidden">
                          {pluralize(account.activeKeyCount, "active key")}
                          {account.disabledAt ? " · disabled" : ""}
                        </span>
                      </div>
                    </Table.Cell>
                    <Table.Cell className="hidden sm:table-cell">
                      <span className="text-sm tabular-nums">{account.activeKeyCount}</span>
                    </Table.Cell>
                    <Table.Cell className="hidden md:table-cell">
                      <RelativeTime className="text-sm whitespace-nowrap text-muted" iso={account.createdAt} />
                    </Table.Cell>
                    <Table.Cell className="hidden sm:table-cell">
                      {account.disabledAt ? (
                        <Chip color="danger" size="sm" variant="soft">
                          Disabled
                        </Chip>
                      ) : (
                        <Chip color="success" size="sm" variant="soft">
                          Enabled
                        </Chip>
                      )}
                    </Table.Cell>
                    <Table.Cell>
                      {account.disabledAt ? null : (
                        <div className="flex justify-end">
                          <Button
                            aria-label={`Disable ${account.name}`}
                            size="sm"
                            variant="danger-soft"
                            onPress={() => {
                              disable.reset();
                              setDisabling(account);
                            }}
                          >
                            Disable
                          </Button>
                        </div>
                      )}
                    </Table.Cell>
                  </Table.Row>
                ))}
              </Table.Body>
            </Table.Content>
          </Table.ScrollContainer>
        </Table>
      )}

      <CreateServiceAccountDialog isOpen={creating} namespace={namespace} onOpenChange={setCreating} />

      <ConfirmActionDialog
        confirmLabel="Disable account"
        error={disable.error?.message ?? null}
        isOpen={disabling !== null}
        isPending={disable.isPending}
        pendingLabel="Disabling…"
        title={`Disable “${disabling?.name ?? ""}”?`}
        onConfirm={() => disabling && disable.mutate({ namespace, serviceAccountId: disabling.id })}
        onOpenChange={(open) => (open ? undefined : setDisabling(null))}
      >
        <p>
          Its {disabling ? pluralize(disabling.activeKeyCount, "active key") : "keys"} stop working on their next request, and no new key can be
          created for it. This cannot be undone.
        </p>
      </ConfirmActionDialog>
    </Card>
  );
}

function CreateServiceAccountDialog({ namespace, isOpen, onOpenChange }: { namespace: string; isOpen: boolean; onOpenChange: (open: boolean) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const create = useMutation(
    trpc.apiKeys.serviceAccounts.create.mutationOptions({
      onSuccess: async () => {
        onOpenChange(false);
        await queryClient.invalidateQueries(trpc.apiKeys.serviceAccounts.pathFilter());
      },
    }),
  );
  const { reset } = create;

  useEffect(() => {
    if (!isOpen) return;
    setName("");
    setDescription("");
    reset();
  }, [isOpen, reset]);

  const fieldErrors = Object.fromEntries(
    Object.entries(create.error?.data?.zodError?.fieldErrors ?? {}).filter((entry): entry is [string, string[]] => Array.isArray(entry[1])),
  );
  // A duplicate name comes back as a conflict whose message names the field.
  const conflict = create.error && Object.keys(fieldErrors).length === 0 ? create.error.message : null;

  return (
    <Modal.Backdrop isOpen={isOpen} onOpenChange={onOpenChange}>
      <Modal.Container placement="center" size="md">
        <Modal.Dialog aria-label="New service account">
          <Modal.CloseTrigger />
          <Modal.Header>
            <Modal.Heading>New service account</Modal.Heading>
            <p className="text-sm text-muted">
              In <span className="font-medium text-foreground">{namespace}</span>. Create keys for it from the API keys panel.
            </p>
          </Modal.Header>
          <Form
            className="contents"
            validationErrors={conflict?.startsWith("name:") ? { ...fieldErrors, name: conflict.replace(/^name:\s*/, "") } : fieldErrors}
            onSubmit={(event) => {
              event.preventDefault();
              create.mutate({ namespace, name: name.trim(), description: description.trim() || null });
            }}
          >
            <Modal.Body className="mt-2 flex flex-col gap-5">
              {conflict && !conflict.startsWith("name:") ? (
                <Alert status="danger">
                  <Alert.Indicator />
                  <Alert.Content>
                    <Alert.Title>The service account was not created</Alert.Title>
                    <Alert.Description>{conflict}</Alert.Description>
                  </Alert.Content>
                </Alert>
              ) : null}
              <TextField autoFocus isRequired maxLength={100} name="name" value={name} onChange={setName}>
                <Label>Name</Label>
                <Input placeholder="billing-workers" />
                <FieldError />
              </TextField>
              <TextField maxLength={500} name="description" value={description} onChange={setDescription}>
                <Label>Description</Label>
                <TextArea placeholder="What runs as this account, and who to ask about it" rows={2} />
                <Description>Optional.</Description>
                <FieldError />
              </TextField>
            </Modal.Body>
            <Modal.Footer>
              <Button slot="close" variant="secondary">
                Cancel
              </Button>
              <Button isDisabled={name.trim() === ""} isPending={create.isPending} type="submit">
                {create.isPending ? "Creating…" : "Create account"}
              </Button>
            </Modal.Footer>
          </Form>
        </Modal.Dialog>
      </Modal.Container>
    </Modal.Backdrop>
  );
}

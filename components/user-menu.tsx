"use client";

import { Avatar, Dropdown, Label } from "@heroui/react";
import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useConsoleSession } from "./console-session";
import { ChevronUpDownIcon, SettingsIcon, SignOutIcon } from "./icons";
import { useTRPC } from "./trpc";
import { userInitials } from "./user-initials";

/**
 * Who is signed in, and the way out. Signing out ends the session on the
 * server (its row is deleted, the cookie cleared) and then loads /sign-in
 * afresh, so nothing of this user's stays in the page's memory.
 */
export function UserMenu({ compact = false }: { compact?: boolean }) {
  const { user } = useConsoleSession();
  const trpc = useTRPC();
  const router = useRouter();
  const signOut = useMutation(
    trpc.auth.signOut.mutationOptions({
      onSettled: (_data, error) => {
        // UNAUTHORIZED means the session had already ended: signed out either way.
        if (!error || error.data?.code === "UNAUTHORIZED") window.location.assign("/sign-in");
      },
    }),
  );
  const name = user.displayName?.trim() || user.email;
  const avatar = (
    <Avatar className="shrink-0" color="accent" size="sm" variant="soft">
      <Avatar.Fallback>{userInitials(user)}</Avatar.Fallback>
    </Avatar>
  );

  return (
    <div className="flex flex-col gap-1.5">
      <Dropdown>
        <Dropdown.Trigger
          aria-label={`Account: ${name}`}
          className={
            compact
              ? "rounded-full outline-none focus-visible:ring-2 focus-visible:ring-focus"
              : "flex w-full items-center gap-2.5 rounded-xl px-2 py-1.5 text-left outline-none transition-colors hover:bg-default focus-visible:ring-2 focus-visible:ring-focus"
          }
        >
          {avatar}
          {compact ? null : (
            <>
              <span className="flex min-w-0 flex-1 flex-col">
                <span className="truncate text-sm font-medium text-foreground">{name}</span>
                <span className="truncate text-xs text-muted">{user.isOwner ? `${user.email} · owner` : user.email}</span>
              </span>
              <ChevronUpDownIcon className="size-4 shrink-0 text-muted" />
            </>
          )}
        </Dropdown.Trigger>
        <Dropdown.Popover className="min-w-56" placement={compact ? "bottom end" : "top start"}>
          <div className="flex items-center gap-2.5 px-3 pt-3 pb-2">
            {avatar}
            <div className="flex min-w-0 flex-col">
              <p className="truncate text-sm font-medium text-foreground">{name}</p>
              <p className="truncate text-xs text-muted">{user.email}</p>
            </div>
          </div>
          <Dropdown.Menu
            aria-label="Account"
            onAction={(key) => {
              if (key === "settings") router.push("/settings");
              if (key === "sign-out") signOut.mutate();
            }}
          >
            <Dropdown.Item id="settings" textValue="Settings">
              <SettingsIcon className="size-4 text-muted" />
              <Label>Settings</Label>
            </Dropdown.Item>
            <Dropdown.Item id="sign-out" textValue="Sign out" variant="danger">
              <SignOutIcon className="size-4" />
              <Label>{signOut.isPending ? "Signing out…" : "Sign out"}</Label>
            </Dropdown.Item>
          </Dropdown.Menu>
        </Dropdown.Popover>
      </Dropdown>
      {signOut.isError && signOut.error.data?.code !== "UNAUTHORIZED" ? (
        <p className="px-2 text-xs text-danger" role="alert">
          Sign-out failed: {signOut.error.message}
        </p>
      ) : null}
    </div>
  );
}

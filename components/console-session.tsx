"use client";

import { useQuery } from "@tanstack/react-query";
import type { Route } from "next";
import { usePathname, useRouter } from "next/navigation";
import type { ReactNode } from "react";
import { createContext, useContext, useMemo, useState } from "react";
import type { NamespaceRole } from "@/server/auth/principal";
import type { SignedInUser } from "@/server/trpc/routers/auth";
import type { NamespaceOutput } from "@/server/trpc/routers/namespaces";
import { chooseNamespace, namespaceCookie } from "./namespace-choice";
import { useTRPC } from "./trpc";

/** What the root layout learned about the signed-in user (app/console-session.ts), handed to the browser. */
export interface InitialConsoleSession {
  user: SignedInUser;
  namespaces: NamespaceOutput[];
  namespace: string | null;
}

export interface ConsoleSessionValue {
  user: SignedInUser;
  /** Live: refetched after a namespace is created or a membership changes. */
  namespaces: NamespaceOutput[];
  /** The namespace every namespaced page shows; null when the user can see none. */
  namespace: string | null;
  /** The user's role there (an owner is admin everywhere). */
  role: NamespaceRole | null;
  setNamespace: (name: string) => void;
}

const ConsoleSessionContext = createContext<ConsoleSessionValue | null>(null);

export function ConsoleSessionProvider({ initial, children }: { initial: InitialConsoleSession; children: ReactNode }) {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const list = useQuery({ ...trpc.namespaces.list.queryOptions(), initialData: initial.namespaces });
  const [preferred, setPreferred] = useState(initial.namespace);

  const value = useMemo((): ConsoleSessionValue => {
    const namespaces = list.data;
    const namespace = chooseNamespace(namespaces, preferred);
    return {
      user: initial.user,
      namespaces,
      namespace,
      role: namespaces.find((n) => n.name === namespace)?.role ?? null,
      setNamespace: (name) => {
        // The cookie lets the next server render prefetch the same namespace.
        document.cookie = namespaceCookie(name);
        setPreferred(name);
        // The API keys page takes its namespace from the address, so the address must follow.
        if (pathname === "/settings/api-keys") router.replace(`/settings/api-keys?ns=${encodeURIComponent(name)}` as Route);
      },
    };
  }, [initial.user, list.data, preferred, pathname, router]);

  return <ConsoleSessionContext.Provider value={value}>{children}</ConsoleSessionContext.Provider>;
}

export function useConsoleSession(): ConsoleSessionValue {
  const value = useContext(ConsoleSessionContext);
  if (!value) throw new Error("useConsoleSession outside the console shell");
  return value;
}

/** The namespace the console is showing, for the `namespace` input of namespaced procedures. */
export function useNamespace(): string | null {
  return useConsoleSession().namespace;
}

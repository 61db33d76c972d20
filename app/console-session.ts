import { createTRPCOptionsProxy } from "@trpc/tanstack-react-query";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { REQUESTED_PATH_HEADER, signInPath } from "@/components/auth-routes";
import { NAMESPACE_COOKIE, chooseNamespace } from "@/components/namespace-choice";
import { createTrpcContext } from "@/server/trpc/context";
import type { TrpcContext } from "@/server/trpc/init";
import type { NamespaceOutput } from "@/server/trpc/routers/namespaces";
import type { SignedInUser } from "@/server/trpc/routers/auth";
import { appRouter, createCaller } from "@/server/trpc/routers/_app";
import { getWebContext } from "@/server/web/web-context";
import { getServerQueryClient } from "./trpc-server";

/** The page the visitor asked for, as proxy.ts recorded it. */
export async function requestedPath(): Promise<string> {
  return (await headers()).get(REQUESTED_PATH_HEADER) ?? "/";
}

/**
 * The tRPC context of this page request: the caller is whoever the request's
 * session cookie belongs to, exactly as for a call through /api/trpc. Built
 * once per request (`cache`), so the layout and the page authenticate once.
 */
const requestContext = cache(async (): Promise<TrpcContext> => {
  const { db, config, blobs } = getWebContext();
  const incoming = await headers();
  const request = new Request(new URL(await requestedPath(), `http://${incoming.get("host") ?? "localhost"}`), { headers: incoming });
  return createTrpcContext({ db, config, blobs, request, resHeaders: new Headers() });
});

const requestCaller = cache(async () => createCaller(await requestContext()));

/**
 * Server components prefetch through this as the signed-in user, into the
 * request's QueryClient (HydrateClient hands the result to the browser).
 */
export const requestTrpc = createTRPCOptionsProxy({
  ctx: requestContext,
  router: appRouter,
  queryClient: getServerQueryClient,
});

export const getAuthStatus = cache(async () => (await requestCaller()).auth.status());

export interface ConsoleSession {
  user: SignedInUser;
  /** What namespaces.list returns for this user: the ones they can see, with their role. */
  namespaces: NamespaceOutput[];
  /** The namespace the console shows: the remembered choice if still visible (namespace-choice.ts). */
  namespace: string | null;
}

/** Who is signed in, and where they are looking; null for an anonymous request. */
export const getConsoleSession = cache(async (): Promise<ConsoleSession | null> => {
  const status = await getAuthStatus();
  if (!status.user) return null;
  const namespaces = await (await requestCaller()).namespaces.list();
  const preferred = (await cookies()).get(NAMESPACE_COOKIE)?.value;
  return { user: status.user, namespaces, namespace: chooseNamespace(namespaces, preferred) };
});

/**
 * The session of a console page, or a redirect: to /setup on a fresh install,
 * to /sign-in (remembering the page) otherwise. The server check behind
 * proxy.ts's cookie-presence check: an expired or revoked cookie ends here.
 */
export async function requireConsoleSession(): Promise<ConsoleSession> {
  const session = await getConsoleSession();
  if (session) return session;
  if ((await getAuthStatus()).setupRequired) redirect("/setup");
  redirect(signInPath(await requestedPath()));
}

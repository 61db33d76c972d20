import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/auth/sign-in-form";
import { safeNextPath } from "@/components/auth-routes";
import { getAuthStatus } from "../console-session";

export const metadata: Metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { next } = await searchParams;
  const target = safeNextPath(typeof next === "string" ? next : null);
  const status = await getAuthStatus();
  if (status.setupRequired) redirect("/setup");
  if (status.user) redirect(target);
  return <SignInForm next={target} />;
}

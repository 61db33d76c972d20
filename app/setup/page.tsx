import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SetupForm } from "@/components/auth/setup-form";
import { MIN_PASSWORD_LENGTH } from "@/server/auth/password-policy";
import { getAuthStatus } from "../console-session";

export const metadata: Metadata = { title: "Set up" };
export const dynamic = "force-dynamic";

export default async function SetupPage() {
  const status = await getAuthStatus();
  // Setup exists only on a fresh install; afterwards this address just leads on.
  if (!status.setupRequired) redirect(status.user ? "/workflows" : "/sign-in");
  return <SetupForm minPasswordLength={MIN_PASSWORD_LENGTH} />;
}

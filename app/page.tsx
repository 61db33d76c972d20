import { redirect } from "next/navigation";

// Signed-out visitors never get here: proxy.ts and the root layout send them to sign in first.
export default function Home(): never {
  redirect("/workflows");
}

import { buttonVariants } from "@heroui/react";
import Link from "next/link";

export default function RunNotFound() {
  return (
    <div className="flex min-h-[60dvh] flex-col items-center justify-center text-center">
      <p className="font-mono text-sm font-medium text-accent">404</p>
      <h1 className="mt-2 text-2xl font-semibold tracking-tight text-foreground">Run not found</h1>
      <p className="mt-2 max-w-sm text-sm leading-6 text-muted">
        No run with this id exists in the namespace you are looking at. It may belong to another namespace — switch to it and open the link
        again — or the id may be mistyped.
      </p>
      <Link className={`${buttonVariants({ variant: "secondary" })} mt-6`} href="/workflows">
        Back to workflows
      </Link>
    </div>
  );
}

"use client";

import { Button } from "@heroui/react";
import { useEffect } from "react";
import { AlertIcon } from "@/components/icons";

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  useEffect(() => {
    console.error(error);
  }, [error]);

  return (
    <div className="flex min-h-[60dvh] flex-col items-center justify-center text-center" role="alert">
      <span className="flex size-11 items-center justify-center rounded-xl bg-danger-soft text-danger">
        <AlertIcon className="size-5" />
      </span>
      <h1 className="mt-4 text-2xl font-semibold tracking-tight text-foreground">Something went wrong</h1>
      <p className="mt-2 max-w-md text-sm leading-6 text-muted">
        This page failed to render. Trying again often helps; if it does not, the server log has the details
        {error.digest ? (
          <>
            {" "}
            under reference <code className="font-mono text-foreground">{error.digest}</code>
          </>
        ) : null}
        .
      </p>
      <Button className="mt-6" variant="secondary" onPress={reset}>
        Try again
      </Button>
    </div>
  );
}

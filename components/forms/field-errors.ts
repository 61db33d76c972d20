import type { ErrorSchema } from "@rjsf/utils";

/** A server-side validation error of one field: the JSON pointer of the value ("/amount", "/items/0/sku") and why. */
export interface FieldError {
  path: string;
  message: string;
}

/** The segments of a JSON pointer (RFC 6901): "" is the whole document, "/a~1b/0" is ["a/b", "0"]. */
export function pointerSegments(pointer: string): string[] {
  if (pointer === "" || pointer === "/") return [];
  const body = pointer.startsWith("/") ? pointer.slice(1) : pointer;
  return body.split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/**
 * Server field errors as rjsf's `extraErrors`: each message lands in the
 * `__errors` of the field its pointer names, so it is drawn under that field
 * exactly like a client-side error. An error of the whole form (pointer "")
 * goes to the root.
 */
export function fieldErrorsToErrorSchema(errors: readonly FieldError[]): ErrorSchema {
  const root: Record<string, unknown> = {};
  for (const { path, message } of errors) {
    let node = root;
    for (const segment of pointerSegments(path)) {
      const child = node[segment];
      if (typeof child === "object" && child !== null) node = child as Record<string, unknown>;
      else {
        const created: Record<string, unknown> = {};
        node[segment] = created;
        node = created;
      }
    }
    const list = Array.isArray(node.__errors) ? (node.__errors as string[]) : [];
    node.__errors = [...list, message];
  }
  return root as ErrorSchema;
}

/** The value a JSON pointer names, or undefined. */
export function valueAtPointer(value: unknown, pointer: string): unknown {
  let v = value;
  for (const segment of pointerSegments(pointer)) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string, unknown>)[segment];
  }
  return v;
}

/**
 * The server's errors still worth showing: an error whose field was edited
 * since the submission that produced it has been answered, and keeping it on
 * screen would contradict what the person just typed.
 */
export function unansweredErrors(errors: readonly FieldError[], submitted: unknown, current: unknown): FieldError[] {
  return errors.filter((e) => JSON.stringify(valueAtPointer(submitted, e.path)) === JSON.stringify(valueAtPointer(current, e.path)));
}

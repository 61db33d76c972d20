import type { z } from "zod";
import type { Db } from "../../db/pool";
import type { NamespaceAuthorization } from "../auth/authorize";
import type { NamespaceRole, Permission, Principal } from "../auth/principal";
import type { SealingKeys } from "../secrets/sealing";
import type { BlobStore } from "../lib/blob-store";
import type { ApiRequest } from "../web/api-exchange";
import type { Notifier } from "../lib/notifier";
import type { HttpMethod } from "../web/route-table";
import { pathParameterNames } from "../web/route-table";

/**
 * A REST route, declared once: method, path, who may call it, the zod schemas
 * of its params, query, headers, body and responses, and its handler. The
 * dispatcher (dispatch.ts) enforces all of it and the OpenAPI document
 * (openapi.ts) is generated from the same declaration, so the two cannot
 * disagree.
 *
 * Default deny: `auth` is required and is either a Permission — the caller
 * must be authenticated and hold it in the `{ns}` of the path — or the literal
 * "public", which a reviewer sees on the route itself and the default-deny
 * test lists by name.
 */

export type RouteAuth = "public" | Permission;

/**
 * The identity checks the dispatcher runs. Production passes server/auth's
 * (rest-deps.ts); the seam exists so the dispatcher's own unit tests run
 * without a database.
 */
export interface RestAuth {
  authenticate(db: Db, request: ApiRequest): Promise<Principal | null>;
  authorize(db: Db, principal: Principal, namespaceName: string, permission: Permission): Promise<NamespaceAuthorization>;
  checkSameOrigin(request: ApiRequest): { ok: true } | { ok: false; message: string };
}

/** A pino logger satisfies it; info and warn carry a database outage's streak (server/web/database-outage.ts). */
export interface RestLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What every handler may use. One per process in production (rest-deps.ts). */
export interface RestDeps {
  db: Db;
  blobs: BlobStore;
  /** The process's one notifier (started on first use), or null with notifications off. */
  notifier: () => Notifier | null;
  auth: RestAuth;
  /** What namespace secrets are sealed with (server/secrets/sealing.ts). */
  sealingKeys: SealingKeys;
  /** Largest accepted request body; 10 MiB by default. */
  maxBodyBytes?: number;
  logger?: RestLogger;
  /** Epoch ms; Date.now by default. For operator actions' timestamps. */
  now?: () => number;
}

/** The namespace the path names, as the caller may use it. */
export interface NamespaceAccess {
  id: string;
  name: string;
  role: NamespaceRole | null;
}

type AnyObject = z.ZodObject;
type EmptyObject = z.ZodObject<Record<string, never>>;
type SuccessResponses = Record<number, z.ZodType>;

type Caller<A extends RouteAuth> = A extends "public"
  ? { principal: null; namespace: null }
  : { principal: Principal; namespace: NamespaceAccess };

export type RouteContext<A extends RouteAuth, P extends AnyObject, Q extends AnyObject, H extends AnyObject, B extends z.ZodType> = Caller<A> & {
  deps: RestDeps;
  request: ApiRequest;
  /** Aborted when the client goes away: long-polls stop on it. */
  signal: AbortSignal;
  params: z.output<P>;
  query: z.output<Q>;
  headers: z.output<H>;
  body: z.output<B>;
  /** The route table being served (the OpenAPI route documents it). */
  routes: readonly AnyRoute[];
};

export type RouteResult<R extends SuccessResponses> = {
  [S in keyof R & number]: { status: S; body: z.input<R[S]>; headers?: Record<string, string> };
}[keyof R & number];

export interface RouteSpec<
  A extends RouteAuth,
  P extends AnyObject,
  Q extends AnyObject,
  H extends AnyObject,
  B extends z.ZodType,
  R extends SuccessResponses,
> {
  method: HttpMethod;
  /** Relative to /api/v1, with `{name}` parameters; a namespaced route starts with /ns/{ns}. */
  path: string;
  auth: A;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Path parameters other than `ns` (which the dispatcher resolves itself). */
  params?: P;
  query?: Q;
  /** Request headers the route reads, keyed by lowercase name. */
  headers?: H;
  body?: B;
  /** Success responses by status; the dispatcher checks the handler's answer against them. */
  responses: R;
  /** Problem statuses this route answers besides the common ones (400, 401, 403, 404 for protected routes). */
  problems?: number[];
  // NoInfer: R comes from `responses` alone, so the handler's `status: 200` is checked against it, not widened to number.
  handler: (ctx: RouteContext<A, P, Q, H, B>) => Promise<RouteResult<NoInfer<R>>>;
}

/** A route with its types erased: what the table, the dispatcher and the OpenAPI builder handle. */
export interface AnyRoute {
  method: HttpMethod;
  path: string;
  auth: RouteAuth;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: AnyObject;
  query?: AnyObject;
  headers?: AnyObject;
  body?: z.ZodType;
  responses: SuccessResponses;
  problems?: number[];
  handler: (ctx: never) => Promise<{ status: number; body: unknown; headers?: Record<string, string> }>;
}

/**
 * Declares a route. Checks, once at module load, what types cannot: a
 * protected route is namespaced (authorization is always per namespace), and
 * the path's parameters are exactly the params schema's keys — a mismatch
 * would leave a parameter unvalidated or a schema key never filled.
 */
export function defineRoute<
  A extends RouteAuth,
  R extends SuccessResponses,
  P extends AnyObject = EmptyObject,
  Q extends AnyObject = EmptyObject,
  H extends AnyObject = EmptyObject,
  B extends z.ZodType = z.ZodUndefined,
>(spec: RouteSpec<A, P, Q, H, B, R>): AnyRoute {
  const names = pathParameterNames(spec.path);
  if (spec.auth !== "public" && !spec.path.startsWith("/ns/{ns}/")) {
    throw new Error(`Route ${spec.method} ${spec.path}: a protected route must live under /ns/{ns}/ (authorization is per namespace)`);
  }
  const own = names.filter((n) => n !== "ns").sort();
  const declared = Object.keys(spec.params?.shape ?? {}).sort();
  if (own.join(",") !== declared.join(",")) {
    throw new Error(`Route ${spec.method} ${spec.path}: path parameters [${own.join(", ")}] differ from the params schema's keys [${declared.join(", ")}]`);
  }
  if (spec.headers !== undefined) {
    for (const key of Object.keys(spec.headers.shape)) {
      if (key !== key.toLowerCase()) throw new Error(`Route ${spec.method} ${spec.path}: header "${key}" must be declared in lowercase`);
    }
  }
  if (Object.keys(spec.responses).length === 0) throw new Error(`Route ${spec.method} ${spec.path}: no success response declared`);
  return spec;
}

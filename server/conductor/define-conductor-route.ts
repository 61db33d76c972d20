import type { z } from "zod";
import type { Db } from "../../db/pool";
import type { Permission, Principal } from "../auth/principal";
import type { BlobStore } from "../lib/blob-store";
import type { ApiRequest } from "../web/api-exchange";
import type { Notifier } from "../lib/notifier";
import type { HttpMethod } from "../web/route-table";
import { pathParameterNames } from "../web/route-table";

/**
 * A route of the Conductor layer, declared once like /api/v1's: method, path
 * (relative to /conductor/api), the permission it needs in the caller's own
 * namespace — or "public", which only POST /token is — the zod schemas its
 * path parameters, query and body are validated with, and the handler.
 * Conductor's API has no namespace in its paths: an API key acts in the one
 * namespace it belongs to, and every handler passes that namespace to every
 * call into server/.
 */

/** A pino logger satisfies it; info and warn carry a database outage's streak (server/web/database-outage.ts). */
export interface ConductorLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ConductorDeps {
  db: Db;
  blobs: BlobStore;
  /** The process's notifier (long-polls), or null with notifications off. */
  notifier: () => Notifier | null;
  /** The server secret (NODE_FLOW_SECRET): what tokens are signed with. */
  secret: string;
  /** Instance secrets used before `secret`: namespace secrets sealed under them still open. */
  previousSecrets?: readonly string[];
  /** Lifetime of a minted token; DEFAULT_TOKEN_TTL_SECONDS by default. */
  tokenTtlSeconds?: number;
  logger?: ConductorLogger;
  /** Epoch ms; Date.now by default. */
  now?: () => number;
  /** Largest accepted request body; 10 MiB by default. */
  maxBodyBytes?: number;
}

export type ConductorRouteAuth = "public" | Permission;
/** Conductor's API has no PATCH. */
type ConductorMethod = Exclude<HttpMethod, "PATCH">;

/** What a handler answers: JSON (Content-Type application/json), plain text (an id), or nothing. */
export type ConductorAnswer = { status: number; json: unknown } | { status: number; text: string } | { status: 204 };

type AnyObject = z.ZodObject;
type EmptyObject = z.ZodObject<Record<string, never>>;
/** The principal of a protected route: always an API key (a session cookie is not a Conductor credential). */
type KeyPrincipal = Principal & { kind: "apiKey" };

export interface ConductorRouteContext<A extends ConductorRouteAuth, P extends AnyObject, Q extends AnyObject, B extends z.ZodType> {
  deps: ConductorDeps;
  request: ApiRequest;
  /** Aborted when the client goes away: long-polls stop on it. */
  signal: AbortSignal;
  principal: A extends "public" ? null : KeyPrincipal;
  /** The caller's namespace (its key's); null on the public route. */
  namespaceId: A extends "public" ? null : string;
  params: z.output<P>;
  query: z.output<Q>;
  /** The JSON body as validated, or — for a `textBody` route — the body as text. */
  body: z.output<B>;
}

export interface ConductorRouteSpec<A extends ConductorRouteAuth, P extends AnyObject, Q extends AnyObject, B extends z.ZodType> {
  method: ConductorMethod;
  path: string;
  auth: A;
  summary: string;
  params?: P;
  query?: Q;
  /** The JSON body's schema; a `textBody` route's schema validates the body's text. */
  body?: B;
  /** Read the body as text, not JSON (POST /tasks/{taskId}/log takes the log line as the raw body). */
  textBody?: boolean;
  handler: (ctx: ConductorRouteContext<A, P, Q, B>) => Promise<ConductorAnswer>;
}

export interface AnyConductorRoute {
  method: ConductorMethod;
  path: string;
  auth: ConductorRouteAuth;
  summary: string;
  params?: AnyObject;
  query?: AnyObject;
  body?: z.ZodType;
  textBody?: boolean;
  handler: (ctx: never) => Promise<ConductorAnswer>;
}

/** Declares a route; checks at module load that the path's parameters are exactly the params schema's keys. */
export function defineConductorRoute<
  A extends ConductorRouteAuth,
  P extends AnyObject = EmptyObject,
  Q extends AnyObject = EmptyObject,
  B extends z.ZodType = z.ZodUndefined,
>(spec: ConductorRouteSpec<A, P, Q, B>): AnyConductorRoute {
  const names = pathParameterNames(spec.path).sort();
  const declared = Object.keys(spec.params?.shape ?? {}).sort();
  if (names.join(",") !== declared.join(",")) {
    throw new Error(`Conductor route ${spec.method} ${spec.path}: path parameters [${names.join(", ")}] differ from the params schema's keys [${declared.join(", ")}]`);
  }
  return spec;
}

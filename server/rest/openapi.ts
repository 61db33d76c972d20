import { z } from "zod";
import { SESSION_COOKIE } from "../auth/sessions";
import type { AnyRoute } from "./define-route";
import { pathParameterNames } from "../web/route-table";
import { PROBLEM_CONTENT_TYPE, PROBLEM_KINDS, ProblemFieldErrorSchema, ProblemSchema } from "./problem";

/**
 * The OpenAPI 3.1 document, generated from the route table and the very zod
 * schemas the dispatcher validates with (z.toJSONSchema; 3.1 schemas are JSON
 * Schema 2020-12, so they go in as they come out). Never written by hand: a
 * hand-kept document is wrong the first time someone forgets it, and nothing
 * fails when it is.
 */

type JsonSchema = Record<string, unknown>;

interface Component {
  name: string;
  /** What the document shows; may differ from the validator (see {@link documentAs}). */
  schema: z.ZodType;
}

const components = new WeakMap<z.ZodType, Component>();

/**
 * Marks `schema` as a named component: wherever it occurs the document holds a
 * `$ref` to `#/components/schemas/<name>`, described by `documented` (the
 * schema itself by default). A different `documented` is for validators the
 * JSON Schema conversion cannot see into — a definition body is checked by
 * validateDefinition (every problem at once, with node refs) inside a
 * refinement, and documented as WorkflowDefinitionSchema, the schema that
 * check applies.
 */
export function documentAs<T extends z.ZodType>(schema: T, name: string, documented: z.ZodType = schema): T {
  components.set(schema, { name, schema: documented });
  return schema;
}

documentAs(ProblemSchema, "Problem");
documentAs(ProblemFieldErrorSchema, "ProblemFieldError");

/**
 * Rewrites the references zod makes relative to the schema it converted — "#"
 * (the schema itself, for a recursive one such as a definition's inline
 * sub-workflow) and "#/$defs/…" — into references to components, which is
 * where the schema lives in the document. `$defs` move to components named
 * `<owner>.<def>`.
 */
function relocateRefs(value: unknown, owner: string | undefined, extra: Map<string, JsonSchema>): void {
  if (Array.isArray(value)) {
    for (const item of value) relocateRefs(item, owner, extra);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const node = value as JsonSchema;
  const defs = node.$defs as Record<string, JsonSchema> | undefined;
  if (defs !== undefined) {
    delete node.$defs;
    for (const [name, def] of Object.entries(defs)) {
      relocateRefs(def, owner, extra);
      extra.set(`${owner ?? "Inline"}.${name}`, def);
    }
  }
  for (const [key, child] of Object.entries(node)) {
    if (key === "$ref" && typeof child === "string") {
      if (child === "#") {
        if (owner === undefined) throw new Error("A recursive schema must be a component (documentAs) to be referenced in the OpenAPI document");
        node.$ref = `#/components/schemas/${owner}`;
      } else if (child.startsWith("#/$defs/")) {
        node.$ref = `#/components/schemas/${owner ?? "Inline"}.${child.slice("#/$defs/".length)}`;
      }
    } else relocateRefs(child, owner, extra);
  }
}

/** JSON Schema of `schema`, with components replaced by $refs and collected into `used`. */
function toSchema(
  schema: z.ZodType,
  io: "input" | "output",
  used: Map<string, Component>,
  root?: { schema: z.ZodType; name: string; extra: Map<string, JsonSchema> },
): JsonSchema {
  const out = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io,
    // A transform or custom check has no JSON Schema; it documents as "any value" rather than failing the document.
    unrepresentable: "any",
    override(ctx) {
      const zodSchema = ctx.zodSchema as unknown as z.ZodType;
      const component = components.get(zodSchema);
      if (component === undefined || zodSchema === root?.schema) return;
      used.set(component.name, component);
      const target = ctx.jsonSchema as JsonSchema;
      for (const key of Object.keys(target)) delete target[key];
      target.$ref = `#/components/schemas/${component.name}`;
    },
  }) as JsonSchema;
  delete out.$schema;
  relocateRefs(out, root?.name, root?.extra ?? new Map<string, JsonSchema>());
  return out;
}

function isOptional(schema: z.ZodType): boolean {
  return schema.safeParse(undefined).success;
}

function parameters(route: AnyRoute, used: Map<string, Component>): JsonSchema[] {
  const list: JsonSchema[] = [];
  if (pathParameterNames(route.path).includes("ns")) {
    list.push({ name: "ns", in: "path", required: true, description: "The namespace's name.", schema: { type: "string", minLength: 1 } });
  }
  const groups: [string, z.ZodObject | undefined][] = [
    ["path", route.params],
    ["query", route.query],
    ["header", route.headers],
  ];
  for (const [where, object] of groups) {
    for (const [name, field] of Object.entries(object?.shape ?? {}) as [string, z.ZodType][]) {
      const schema = toSchema(field, "input", used);
      const description = typeof schema.description === "string" ? schema.description : undefined;
      list.push({
        name,
        in: where,
        required: where === "path" || !isOptional(field),
        ...(description === undefined ? {} : { description }),
        schema,
      });
    }
  }
  return list;
}

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No content",
  ...Object.fromEntries(Object.values(PROBLEM_KINDS).map((k) => [k.status, k.title])),
  409: "Conflict",
};

function operation(route: AnyRoute, used: Map<string, Component>): JsonSchema {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, schema] of Object.entries(route.responses)) {
    responses[status] =
      status === "204"
        ? { description: STATUS_TEXT[204] }
        : { description: STATUS_TEXT[Number(status)] ?? "Success", content: { "application/json": { schema: toSchema(schema, "output", used) } } };
  }
  const problemStatuses = new Set<number>(route.problems ?? []);
  if (route.auth !== "public") for (const s of [400, 401, 403, 404]) problemStatuses.add(s);
  if (route.body !== undefined) for (const s of [400, 413, 415]) problemStatuses.add(s);
  problemStatuses.add(500);
  used.set("Problem", { name: "Problem", schema: ProblemSchema });
  for (const status of [...problemStatuses].sort((a, b) => a - b)) {
    responses[String(status)] = {
      description: STATUS_TEXT[status] ?? "Problem",
      content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: "#/components/schemas/Problem" } } },
    };
  }
  const op: JsonSchema = {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    tags: route.tags,
    parameters: parameters(route, used),
    responses,
    // An empty list is OpenAPI's "no authentication"; otherwise either scheme will do.
    security: route.auth === "public" ? [] : [{ bearer: [] }, { session: [] }],
    "x-node-flow-permission": route.auth,
  };
  if (route.body !== undefined) {
    op.requestBody = {
      required: !isOptional(route.body),
      content: { "application/json": { schema: toSchema(route.body, "input", used) } },
    };
  }
  return op;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
  [key: string]: unknown;
}

const documents = new WeakMap<readonly AnyRoute[], OpenApiDocument>();

/** The document for a route table; built once per table (the table is fixed at module load). */
export function buildOpenApiDocument(routes: readonly AnyRoute[]): OpenApiDocument {
  const cached = documents.get(routes);
  if (cached) return cached;
  const used = new Map<string, Component>();
  const paths: OpenApiDocument["paths"] = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operation(route, used);
  }
  // Components may use components (Problem holds ProblemFieldError): convert until none is new.
  const schemas: Record<string, JsonSchema> = {};
  const extra = new Map<string, JsonSchema>();
  for (let pending = [...used.values()]; pending.length > 0; pending = [...used.values()].filter((c) => !(c.name in schemas))) {
    for (const component of pending) schemas[component.name] = toSchema(component.schema, "input", used, { schema: component.schema, name: component.name, extra });
  }
  for (const [name, schema] of extra) schemas[name] = schema;
  const document: OpenApiDocument = {
    openapi: "3.1.0",
    info: {
      title: "node-flow API",
      version: "1",
      description:
        "REST API for workers and automation. Authenticate with an API key (`Authorization: Bearer nf_…`). Errors are RFC 9457 problem details (`application/problem+json`).",
    },
    servers: [{ url: "/api/v1" }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key: nf_<prefix>_<secret>." },
        session: { type: "apiKey", in: "cookie", name: SESSION_COOKIE, description: "The console's session cookie; state changes must also carry a same-origin Origin header." },
      },
    },
  };
  documents.set(routes, document);
  return document;
}

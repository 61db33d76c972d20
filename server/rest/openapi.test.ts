import { describe, expect, it } from "vitest";
import { pathParameterNames } from "../web/route-table";
import { buildOpenApiDocument } from "./openapi";
import { ROUTES } from "./routes";

type Operation = {
  operationId: string;
  security: unknown[];
  parameters: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
};

const document = buildOpenApiDocument(ROUTES);

function operation(path: string, method: string): Operation | undefined {
  return document.paths[path]?.[method] as Operation | undefined;
}

/** Every "$ref" anywhere in `value`. */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, out);
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe("the OpenAPI document", () => {
  it("is an OpenAPI 3.1 document with paths, components and a bearer security scheme", () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info.title).toBeTruthy();
    expect(Object.keys(document.paths).length).toBeGreaterThan(0);
    expect(document.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    expect(document.components.schemas.Problem).toEqual(expect.objectContaining({ type: "object" }));
  });

  it("lists every route of the table with its method, once, under a unique operationId", () => {
    for (const route of ROUTES) {
      const op = operation(route.path, route.method.toLowerCase());
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op!.operationId).toBe(route.operationId);
    }
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    expect(operations).toHaveLength(ROUTES.length);
    expect(new Set(ROUTES.map((r) => r.operationId)).size).toBe(ROUTES.length);
  });

  it("requires a credential on every route but the deliberately public ones", () => {
    for (const route of ROUTES) {
      const op = operation(route.path, route.method.toLowerCase())!;
      if (route.auth === "public") expect(op.security).toEqual([]);
      else expect(op.security).toEqual([{ bearer: [] }, { session: [] }]);
    }
  });

  it("documents each path parameter, and each body and answer with a schema", () => {
    for (const route of ROUTES) {
      const op = operation(route.path, route.method.toLowerCase())!;
      const pathParams = op.parameters.filter((p) => p.in === "path").map((p) => p.name).sort();
      expect(pathParams, `${route.method} ${route.path}`).toEqual(pathParameterNames(route.path).sort());
      if (route.body !== undefined) expect(op.requestBody?.content["application/json"]?.schema).toBeDefined();
      for (const status of Object.keys(route.responses)) {
        if (status !== "204") expect(op.responses[status]?.content?.["application/json"]?.schema, `${route.operationId} ${status}`).toBeDefined();
      }
      if (route.auth !== "public") expect(op.responses["401"]?.content?.["application/problem+json"]).toBeDefined();
    }
  });

  it("documents the start-run body from the same zod schema the dispatcher validates with", () => {
    const op = operation("/ns/{ns}/runs", "post")!;
    const schema = op.requestBody!.content["application/json"]!.schema as { properties: Record<string, unknown>; required: string[]; additionalProperties: boolean };
    expect(Object.keys(schema.properties).sort()).toEqual(["correlationId", "input", "name", "priority", "version"]);
    expect(schema.required).toEqual(["name"]);
    expect(schema.additionalProperties).toBe(false);
    expect(op.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(expect.arrayContaining(["header:idempotency-key", "header:idempotency-strategy"]));
  });

  it("describes a definition body by the engine's definition schema, as a shared component", () => {
    const op = operation("/ns/{ns}/definitions", "post")!;
    expect(op.requestBody!.content["application/json"]!.schema).toEqual({ $ref: "#/components/schemas/WorkflowDefinition" });
    const definition = document.components.schemas.WorkflowDefinition as { properties: Record<string, unknown> };
    expect(Object.keys(definition.properties)).toEqual(expect.arrayContaining(["name", "nodes", "edges"]));
  });

  it("has no dangling $ref", () => {
    for (const ref of refs(document)) {
      const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
      expect(name, ref).toBeDefined();
      expect(document.components.schemas[name!], ref).toBeDefined();
    }
  });

  it("survives a JSON round trip unchanged (nothing in it that JSON cannot carry)", () => {
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
  });
});

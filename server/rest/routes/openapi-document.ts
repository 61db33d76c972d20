import { z } from "zod";
import { defineRoute } from "../define-route";
import { buildOpenApiDocument } from "../openapi";

export const openApiRoute = defineRoute({
  method: "GET",
  path: "/openapi.json",
  // Deliberately public: the API's shape is no secret, and clients and code
  // generators fetch it before they have a key. It names routes and schemas, never data.
  auth: "public",
  operationId: "getOpenApiDocument",
  summary: "This document: OpenAPI 3.1, generated from the route table",
  tags: ["Meta"],
  responses: { 200: z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()), components: z.record(z.string(), z.unknown()) }) },
  handler: ({ routes }) => Promise.resolve({ status: 200 as const, body: buildOpenApiDocument(routes) }),
});

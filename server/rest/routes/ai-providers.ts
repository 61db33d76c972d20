import { z } from "zod";
import { actorOfPrincipal, createdByOfPrincipal } from "../../auth/api-keys";
import { AiProviderConfigSchema, AiProviderNameSchema, deleteAiProvider, getAiProvider, listAiProviders, saveAiProvider } from "../../ai/ai-providers";
import type { AiProvider } from "../../ai/ai-providers";
import { defineRoute } from "../define-route";
import { HttpProblem, jsonPointer, validationProblem } from "../problem";
import { iso } from "../schemas";

const tags = ["AI providers"];

const AiProviderDtoSchema = z
  .object({
    name: z.string(),
    kind: z.enum(["openai", "anthropic"]),
    baseUrl: z.string(),
    apiKeySecret: z.string().nullable(),
    models: z.array(z.string()),
    allowPrivateNetwork: z.boolean(),
    description: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    updatedBy: z.string().nullable(),
  })
  .meta({ description: "A model provider AI tasks name as llmProvider; its key is the namespace secret apiKeySecret names." });

function toDto(p: AiProvider): z.input<typeof AiProviderDtoSchema> {
  return { ...p, createdAt: iso(p.createdAt), updatedAt: iso(p.updatedAt) };
}

const Params = z.object({ name: AiProviderNameSchema });
const notFound = (name: string, namespace: string) => new HttpProblem("not-found", `No AI provider "${name}" in namespace ${namespace}`);

export const putAiProviderRoute = defineRoute({
  method: "PUT",
  path: "/ns/{ns}/ai-providers/{name}",
  auth: "edit",
  operationId: "putAiProvider",
  summary: "Create or replace an AI provider (OpenAI-compatible or Anthropic) with its allowed models",
  tags,
  params: Params,
  body: AiProviderConfigSchema,
  responses: { 200: AiProviderDtoSchema, 201: AiProviderDtoSchema },
  handler: async ({ deps, principal, namespace, params, body }) => {
    const saved = await saveAiProvider(deps.db, { namespaceId: namespace.id, name: params.name, config: body, actor: actorOfPrincipal(principal), updatedBy: createdByOfPrincipal(principal) });
    if (!saved.ok) throw validationProblem(saved.problems.map((p) => ({ pointer: jsonPointer(["body", ...p.path]), message: p.message })));
    return { status: saved.created ? 201 : 200, body: toDto(saved.provider) };
  },
});

export const listAiProvidersRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/ai-providers",
  auth: "read",
  operationId: "listAiProviders",
  summary: "List the namespace's AI providers",
  tags,
  responses: { 200: z.object({ items: z.array(AiProviderDtoSchema) }) },
  handler: async ({ deps, namespace }) => ({ status: 200, body: { items: (await listAiProviders(deps.db, namespace.id)).map(toDto) } }),
});

export const getAiProviderRoute = defineRoute({
  method: "GET",
  path: "/ns/{ns}/ai-providers/{name}",
  auth: "read",
  operationId: "getAiProvider",
  summary: "One AI provider",
  tags,
  params: Params,
  responses: { 200: AiProviderDtoSchema },
  handler: async ({ deps, namespace, params }) => {
    const provider = await getAiProvider(deps.db, namespace.id, params.name);
    if (provider === undefined) throw notFound(params.name, namespace.name);
    return { status: 200, body: toDto(provider) };
  },
});

export const deleteAiProviderRoute = defineRoute({
  method: "DELETE",
  path: "/ns/{ns}/ai-providers/{name}",
  auth: "edit",
  operationId: "deleteAiProvider",
  summary: "Delete an AI provider: tasks naming it fail from then on, saying so",
  tags,
  params: Params,
  responses: { 200: z.object({ deleted: z.literal(true) }) },
  handler: async ({ deps, principal, namespace, params }) => {
    if (!(await deleteAiProvider(deps.db, { namespaceId: namespace.id, name: params.name, actor: actorOfPrincipal(principal) }))) throw notFound(params.name, namespace.name);
    return { status: 200, body: { deleted: true as const } };
  },
});

export const AI_PROVIDER_ROUTES = [putAiProviderRoute, listAiProvidersRoute, getAiProviderRoute, deleteAiProviderRoute];

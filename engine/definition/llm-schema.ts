import { z } from "zod";

/**
 * The fields of the LLM and retrieval nodes — Conductor's AI task
 * inputParameters, under their Conductor names (llmProvider, model, messages,
 * promptVariables, embeddingModelProvider, index, …). Every value may hold
 * `${…}` expressions, resolved when the task is dispatched; the sidecar's
 * executors (server/ai/llm-tasks.ts) check the resolved values and fail the
 * task naming the field. docs/ai.md describes them.
 */

/** The LLM node types, all run by the sidecar's system-task runner. */
export const LLM_NODE_TYPES = ["LLM_CHAT_COMPLETE", "LLM_TEXT_COMPLETE", "LLM_GENERATE_EMBEDDINGS", "LLM_INDEX_TEXT", "LLM_SEARCH_INDEX"] as const;
export type LlmNodeType = (typeof LLM_NODE_TYPES)[number];

/** A number, or an expression producing one. */
const NumberOrExpression = z.union([z.number(), z.string()]);
/** A boolean, or an expression producing one. */
const BooleanOrExpression = z.union([z.boolean(), z.string()]);

const provider = {
  llmProvider: z.string().min(1).meta({ title: "Provider", description: "The name of an AI provider configured in this namespace (Settings → AI providers)." }),
  model: z.string().min(1).meta({ title: "Model", description: "One of the models the provider allows." }),
};

const sampling = {
  temperature: NumberOrExpression.optional().meta({ title: "Temperature", description: "Sampling temperature, e.g. 0.2; the provider's default when absent." }),
  topP: NumberOrExpression.optional().meta({ title: "Top P", description: "Nucleus sampling, 0–1." }),
  maxTokens: NumberOrExpression.optional().meta({ title: "Max tokens", description: "The longest answer, in tokens. Anthropic requires one: 1024 when absent." }),
  stopWords: z
    .union([z.array(z.string()), z.string()])
    .optional()
    .meta({ title: "Stop words", description: "Sequences that end the answer." }),
  promptVariables: z.record(z.string(), z.unknown()).optional().meta({ title: "Prompt variables", description: "Values for {{name}} placeholders in the prompt, instructions and messages." }),
  jsonOutput: BooleanOrExpression.optional().meta({ title: "JSON output", description: "Ask for a JSON answer and parse it: the output's result is the parsed value." }),
  jsonSchema: z
    .union([z.record(z.string(), z.unknown()), z.string()])
    .optional()
    .meta({ title: "JSON Schema", description: "With jsonOutput: the answer must match this JSON Schema, or the task fails saying why." }),
};

/** One chat message (Conductor's shape: role and message). */
export const LlmMessageSchema = z
  .looseObject({
    role: z.string().min(1).meta({ title: "Role", description: "user, assistant or system (Conductor's tool_call and tool roles pass through)." }),
    message: z.string().meta({ title: "Message", description: "The text; may hold ${…} expressions and {{variables}}." }),
  })
  .meta({ title: "Message" });

/** An LLM_CHAT_COMPLETE node's call. */
export const LlmChatCompleteSchema = z
  .strictObject({
    ...provider,
    instructions: z.string().optional().meta({ title: "Instructions", description: "The system prompt." }),
    messages: z
      .union([z.array(LlmMessageSchema), z.string()])
      .meta({ title: "Messages", description: "The conversation so far, oldest first, or an expression producing it." }),
    ...sampling,
    tools: z
      .union([z.array(z.record(z.string(), z.unknown())), z.string()])
      .optional()
      .meta({ title: "Tools", description: "Tool definitions passed to the model ({name, description, inputSchema}); the tool calls it asks for are in the output's toolCalls." }),
  })
  .meta({ title: "Chat completion" });

/** An LLM_TEXT_COMPLETE node's call. */
export const LlmTextCompleteSchema = z
  .strictObject({
    ...provider,
    prompt: z.string().optional().meta({ title: "Prompt", description: "The prompt text; may hold ${…} expressions and {{variables}}." }),
    promptName: z.string().optional().meta({ title: "Prompt name", description: "Conductor's stored prompt template. node-flow keeps no prompt store: write the text in prompt." }),
    ...sampling,
  })
  .meta({ title: "Text completion" });

/** An LLM_GENERATE_EMBEDDINGS node's call. */
export const LlmGenerateEmbeddingsSchema = z
  .strictObject({
    ...provider,
    text: z.union([z.string(), z.array(z.string())]).meta({ title: "Text", description: "The text to embed (a list embeds each)." }),
    dimensions: NumberOrExpression.optional().meta({ title: "Dimensions", description: "Ask the model for vectors this long, where it supports it." }),
  })
  .meta({ title: "Embeddings" });

const index = {
  vectorDB: z.string().optional().meta({ title: "Vector DB", description: "Conductor's vector database integration; node-flow always uses its own VectorDocuments table." }),
  namespace: z.string().optional().meta({ title: "Index namespace", description: "A partition inside the index (not a node-flow namespace)." }),
  index: z.string().min(1).meta({ title: "Index", description: "The index's name." }),
  embeddingModelProvider: z.string().min(1).meta({ title: "Embedding provider", description: "The AI provider that computes the embeddings." }),
  embeddingModel: z.string().min(1).meta({ title: "Embedding model", description: "One of that provider's models; index and search must use the same one." }),
  dimensions: NumberOrExpression.optional().meta({ title: "Dimensions" }),
};

/** An LLM_INDEX_TEXT node's document. */
export const LlmIndexTextSchema = z
  .strictObject({
    ...index,
    docId: z.string().min(1).meta({ title: "Document id", description: "Indexing the same id again replaces its chunks." }),
    text: z.string().meta({ title: "Text" }),
    metadata: z
      .union([z.record(z.string(), z.unknown()), z.string()])
      .optional()
      .meta({ title: "Metadata", description: "A JSON object stored with every chunk; search can filter on it." }),
    chunkSize: NumberOrExpression.optional().meta({ title: "Chunk size", description: "Characters per chunk; 1000 when absent." }),
    chunkOverlap: NumberOrExpression.optional().meta({ title: "Chunk overlap", description: "Characters shared by neighbouring chunks; 100 when absent." }),
  })
  .meta({ title: "Index text" });

/** An LLM_SEARCH_INDEX node's query. */
export const LlmSearchIndexSchema = z
  .strictObject({
    ...index,
    query: z.string().meta({ title: "Query" }),
    maxResults: NumberOrExpression.optional().meta({ title: "Max results", description: "Top k; 5 when absent." }),
    metadataFilter: z
      .union([z.record(z.string(), z.unknown()), z.string()])
      .optional()
      .meta({ title: "Metadata filter", description: "Only chunks whose metadata contains this JSON object." }),
  })
  .meta({ title: "Search index" });

/** A node's `llm` fields, by type. */
export const LLM_CONFIG_SCHEMAS = {
  LLM_CHAT_COMPLETE: LlmChatCompleteSchema,
  LLM_TEXT_COMPLETE: LlmTextCompleteSchema,
  LLM_GENERATE_EMBEDDINGS: LlmGenerateEmbeddingsSchema,
  LLM_INDEX_TEXT: LlmIndexTextSchema,
  LLM_SEARCH_INDEX: LlmSearchIndexSchema,
} as const;

/** The inputParameters keys each type takes into its `llm` fields on import (the rest stay in `input`). */
export const LLM_CONFIG_KEYS: { readonly [T in LlmNodeType]: readonly string[] } = Object.fromEntries(
  LLM_NODE_TYPES.map((type) => [type, Object.keys(LLM_CONFIG_SCHEMAS[type].shape)]),
) as unknown as { readonly [T in LlmNodeType]: readonly string[] };

/** The fields Conductor requires of each type, as import checks them. */
export const LLM_REQUIRED_KEYS: { readonly [T in LlmNodeType]: readonly string[] } = {
  LLM_CHAT_COMPLETE: ["llmProvider", "model", "messages"],
  LLM_TEXT_COMPLETE: ["llmProvider", "model"],
  LLM_GENERATE_EMBEDDINGS: ["llmProvider", "model", "text"],
  LLM_INDEX_TEXT: ["index", "embeddingModelProvider", "embeddingModel", "docId", "text"],
  LLM_SEARCH_INDEX: ["index", "embeddingModelProvider", "embeddingModel", "query"],
};

export function isLlmNodeType(type: string): type is LlmNodeType {
  return (LLM_NODE_TYPES as readonly string[]).includes(type);
}

import { z } from "zod";
import { NameSchema } from "../../engine";
import { DEFAULT_AUTH_HEADERS } from "./webhook-auth";

/**
 * A webhook's settings as the APIs take them: one schema for creating and
 * replacing, with the defaults a sender-facing endpoint should have (the
 * whole body as the run's input, answer 202 at once, 1 MiB, 600 calls a
 * minute). The auth header defaults by shape: GitHub's for `hmac-sha256`.
 */

export const WEBHOOK_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const MAX_WEBHOOK_BODY_BYTES = 10 * 1024 * 1024;
export const MAX_WAIT_SECONDS = 30;

const SecretNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be a secret's name: a letter or _, then letters, digits or _ (up to 128)");

const TemplateText = z.string().min(1).max(1000);

export const WebhookConfigSchema = z
  .strictObject({
    description: z.string().max(1000).nullable().optional(),
    workflowName: NameSchema,
    workflowVersion: z.number().int().min(1).nullable().optional().meta({ description: "Null or absent: the latest version at each call." }),
    enabled: z.boolean().default(true),
    authMode: z.enum(["token", "hmac-sha256", "hmac-sha256-timestamped"]),
    secretName: SecretNameSchema.meta({ description: "The namespace secret holding the token or signing key." }),
    authHeader: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/, "must be a header name")
      .transform((h) => h.toLowerCase())
      .optional(),
    toleranceSeconds: z.number().int().min(1).max(86_400).default(300),
    inputMapping: z
      .unknown()
      .default("${body}")
      .meta({ description: "A template over { body, headers, query } giving the run's input, e.g. { \"orderId\": \"${body.order.id}\" }." }),
    correlationIdTemplate: TemplateText.nullable().optional(),
    idempotencyKeyTemplate: TemplateText.nullable().optional().meta({ description: "e.g. ${headers['x-github-delivery']}: a sender's retry starts no second run." }),
    responseMode: z.enum(["accepted", "wait"]).default("accepted"),
    waitSeconds: z.number().int().min(1).max(MAX_WAIT_SECONDS).default(10),
    responseNodeRef: z.string().min(1).max(400).nullable().optional(),
    allowGet: z.boolean().default(false),
    maxBodyBytes: z.number().int().min(1).max(MAX_WEBHOOK_BODY_BYTES).default(1024 * 1024),
    ratePerMinute: z.number().int().min(1).max(60_000).default(600),
  })
  .transform((c) => ({ ...c, authHeader: c.authHeader ?? DEFAULT_AUTH_HEADERS[c.authMode] }));

export type WebhookConfig = z.output<typeof WebhookConfigSchema>;

/**
 * The event an accepted call publishes for the namespace's event handlers
 * (its payload: webhookEventPayload in receive-webhook.ts). It cannot be
 * mistaken for an EVENT task's `webhook:<url>` sink: a name has no colon, a
 * URL always does.
 */
export function webhookEventTopic(name: string): string {
  return `webhook:${name}`;
}

/** Whether an outbox topic is an inbound webhook's event (not an EVENT task's `webhook:<url>`). */
export function isWebhookEventTopic(topic: string): boolean {
  return topic.startsWith("webhook:") && WEBHOOK_NAME_PATTERN.test(topic.slice("webhook:".length));
}

export const WebhookNameSchema = z.string().regex(WEBHOOK_NAME_PATTERN, "must be lower-case letters, digits, - or _, starting with a letter or digit (up to 63)");

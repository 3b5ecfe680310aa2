/**
 * What this server knows of LLMs, answered in the shapes of OpenHands' /api/llm routes. OpenHands
 * lists litellm's whole catalog; we carry no catalog: our one client speaks the OpenAI chat
 * completions protocol to any base_url, so the models we can name are the ones this server's
 * conversations are configured with, their providers the prefixes of those names ("anthropic/x").
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { jsonContent, validationErrorResponse } from '../responses.js';

/** The protocol our LLM client speaks, whatever the model's own provider. */
const CLIENT_PROVIDER = 'openai';

const ProvidersResponseSchema = z.object({ providers: z.array(z.string()) }).openapi('ProvidersResponse');
const ModelsResponseSchema = z.object({ models: z.array(z.string()) }).openapi('ModelsResponse');
const VerifiedModelsResponseSchema = z
  .object({ models: z.record(z.string(), z.array(z.string())) })
  .openapi('VerifiedModelsResponse');

const providersRoute = createRoute({
  method: 'get',
  path: '/api/llm/providers',
  tags: ['LLM'],
  summary: 'Providers of the models this server is configured with, and the protocol it speaks',
  responses: { 200: jsonContent(ProvidersResponseSchema, 'Providers, sorted') },
});

const modelsRoute = createRoute({
  method: 'get',
  path: '/api/llm/models',
  tags: ['LLM'],
  summary: "Models of this server's conversations, optionally of one provider",
  request: { query: z.object({ provider: z.string().min(1).optional() }) },
  responses: { 200: jsonContent(ModelsResponseSchema, 'Models, sorted'), ...validationErrorResponse },
});

const verifiedModelsRoute = createRoute({
  method: 'get',
  path: '/api/llm/models/verified',
  tags: ['LLM'],
  summary: 'Models verified to work, by provider: none, as this server tests no model itself',
  responses: { 200: jsonContent(VerifiedModelsResponseSchema, 'Verified models by provider') },
});

/** "anthropic/claude-x" → "anthropic"; a bare name is served over the OpenAI protocol. */
export function providerOf(model: string): string {
  const slash = model.indexOf('/');
  return slash > 0 ? model.slice(0, slash) : CLIENT_PROVIDER;
}

export function registerLlmCatalog(app: OpenAPIHono, configuredModels: () => string[]): void {
  app.openapi(providersRoute, (c) => {
    const providers = new Set([CLIENT_PROVIDER, ...configuredModels().map(providerOf)]);
    return c.json({ providers: [...providers].sort() }, 200);
  });
  app.openapi(modelsRoute, (c) => {
    const { provider } = c.req.valid('query');
    const models = configuredModels().filter((model) => provider === undefined || providerOf(model) === provider);
    return c.json({ models: [...new Set(models)].sort() }, 200);
  });
  app.openapi(verifiedModelsRoute, (c) => c.json({ models: {} }, 200));
}

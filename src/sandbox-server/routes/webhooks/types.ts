import type { OpenAPIHono } from '@hono/zod-openapi';
import type { WebhookContext } from '../../services/webhooks/context.js';

/** What each webhook `registerX` receives: the app, and the webhook verbs' context. */
export type WebhookRouteRegistrar = (app: OpenAPIHono, ctx: WebhookContext) => void;

import type { OpenAPIHono } from '@hono/zod-openapi';
import type { ServiceContext } from '../services/context.js';

/** What every `registerX` receives: the app to add its route to, and the services' context. */
export type RouteRegistrar = (app: OpenAPIHono, ctx: ServiceContext) => void;

import { createRoute, z } from '@hono/zod-openapi';
import { DomainError, TimedOutError } from '../../../errors/index.js';
import { getAppConversation } from '../../services/app-conversations/get-app-conversations.js';
import { AppConversationSchema, AppConversationStartRequestSchema, AppConversationStartTaskSchema } from '../../models/app-conversation.js';
import { createStartTask } from '../../services/app-conversations/create-start-task.js';
import { toStartTask } from '../../services/app-conversations/app-conversation-view.js';
import { errorResponses } from '../../models/common.js';
import type { AppConversationRouteRegistrar } from './deps.js';

const StartQuerySchema = z.object({
  /** Our extension: answer with the AppConversation once the task is READY (or fail with its detail). */
  wait: z
    .enum(['true', 'false', '1', '0'])
    .transform((value) => value === 'true' || value === '1')
    .default(false),
  /** Seconds `wait=true` holds the request at most. */
  timeout: z.coerce.number().int().min(1).max(900).default(300),
});

const route = createRoute({
  method: 'post',
  path: '/api/v1/app-conversations',
  tags: ['App conversations'],
  summary: 'Start an app conversation',
  description:
    'Answers at once with a start task that moves WORKING -> WAITING_FOR_SANDBOX -> STARTING_CONVERSATION -> READY (or ERROR). ' +
    'With wait=true the request is held until the task ends and answers with the AppConversation.',
  request: {
    query: StartQuerySchema,
    body: { content: { 'application/json': { schema: AppConversationStartRequestSchema } } },
  },
  responses: {
    200: {
      description: 'The start task, or with wait=true the ready AppConversation',
      content: { 'application/json': { schema: z.union([AppConversationStartTaskSchema, AppConversationSchema]) } },
    },
    ...errorResponses(401, 404, 409),
    502: { description: 'wait=true: the sandbox or its agent-server failed' },
    504: { description: 'wait=true: the task did not end within timeout' },
  },
});

export const registerStartAppConversation: AppConversationRouteRegistrar = (app, { ctx, runner }) => {
  app.openapi(route, async (c) => {
    const { wait, timeout } = c.req.valid('query');
    const task = await createStartTask(ctx, c.req.valid('json'), null);
    runner.enqueue(task.id);
    if (!wait) return c.json(toStartTask(task), 200);
    const ended = await runner.waitFor(task.id, timeout * 1000);
    if (ended.status === 'READY') return c.json(await getAppConversation(ctx, ended.conversationId), 200);
    if (ended.status === 'ERROR') {
      throw new DomainError(ended.failure ?? 'upstream', `Start task ${task.id} failed: ${ended.detail ?? 'unknown error'}`);
    }
    throw new TimedOutError(`Start task ${task.id} is still ${ended.status} after ${timeout} s; follow it at /api/v1/app-conversations/start-tasks?ids=${task.id}`);
  });
};

import { setTimeout as delay } from 'node:timers/promises';
import { eq, notInArray } from 'drizzle-orm';
import { DomainError } from '../../../errors/index.js';
import { logger } from '../../../logger.js';
import { appConversations, appConversationStartTasks, type StartTaskRow, sandboxes, sandboxSpecs } from '../../db/schema.js';
import { START_TASK_FAILURES, type StartTaskFailure, type StartTaskStatus } from '../../../contracts/start-task.js';
import { recordEvent } from '../../lifecycle-events/record-event.js';
import { startTaskEvent } from '../../lifecycle-events/start-task-event.js';
import { waitForAgentServer } from '../sandboxes/wait-for-agent-server.js';
import { findLiveSandbox } from '../sandboxes/find-sandbox.js';
import { startSandbox } from '../sandboxes/start-sandbox.js';
import type { AppConversationContext } from './context.js';
import type { AppConversationStartRequest } from '../../models/app-conversation.js';
import { agentConversationRequest, chooseLlmModel } from './start-request.js';
import { brokerConversationSecrets } from './broker-conversation-secrets.js';
import { relayedLlm } from './relayed-llm.js';
import { conversationWorkingDir, prepareRepository, runSetupScript, setUpSkills } from '../repositories/repository-steps.js';

const FINISHED: StartTaskStatus[] = ['READY', 'ERROR'];

/**
 * Drives start tasks WORKING -> WAITING_FOR_SANDBOX -> STARTING_CONVERSATION -> READY (or ERROR).
 * Each step is recorded before the next begins and every step can be repeated safely (creating the
 * conversation again with the same id is answered with the existing one), so after a restart
 * `start()` simply carries every unfinished task on from the step it had reached.
 *
 * Only the replica holding the reconciler's lease runs tasks (two runners of one task could each
 * create a sandbox for it); until it is started, or once stopped, a runner hands the tasks it is
 * given to `handOff`, which passes them to the replica that runs them.
 */
export class StartTaskRunner {
  readonly #ctx: AppConversationContext;
  readonly #handOff: (taskId: string) => void;
  readonly #active = new Map<string, Promise<void>>();
  #stop = new AbortController();
  #running = false;

  constructor(ctx: AppConversationContext, handOff: (taskId: string) => void = () => {}) {
    this.#ctx = ctx;
    this.#handOff = handOff;
  }

  /** Runs tasks from now on, beginning with those unfinished (left by a previous run or holder). */
  async start(): Promise<void> {
    if (!this.#running) {
      this.#running = true;
      this.#stop = new AbortController();
    }
    const unfinished = await this.#ctx.db
      .select({ id: appConversationStartTasks.id })
      .from(appConversationStartTasks)
      .where(notInArray(appConversationStartTasks.status, FINISHED));
    for (const { id } of unfinished) this.enqueue(id);
  }

  enqueue(taskId: string): void {
    if (!this.#running) return this.#handOff(taskId);
    if (this.#active.has(taskId)) return;
    const run = this.#run(taskId).finally(() => this.#active.delete(taskId));
    this.#active.set(taskId, run);
  }

  /** Resolves once the task is READY or ERROR, or with its current row after `timeoutMs`. */
  async waitFor(taskId: string, timeoutMs: number): Promise<StartTaskRow> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const task = await this.#load(taskId);
      if (!task) throw new Error(`start task ${taskId} vanished`);
      if (FINISHED.includes(task.status) || Date.now() >= deadline) return task;
      const pause = delay(Math.min(200, deadline - Date.now()));
      await Promise.race([this.#active.get(taskId) ?? pause, pause]);
    }
  }

  /** Stops waiting; unfinished tasks keep their step in the database for the next start. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#stop.abort(new Error('start tasks stopping'));
    await Promise.allSettled(this.#active.values());
  }

  async #run(taskId: string): Promise<void> {
    let task = await this.#load(taskId);
    try {
      if (task?.status === 'WORKING') task = await this.#chooseSandbox(task);
      if (task?.status === 'WAITING_FOR_SANDBOX') task = await this.#waitForSandbox(task);
      if (task?.status === 'PREPARING_REPOSITORY') task = await this.#prepareRepository(task);
      if (task?.status === 'RUNNING_SETUP_SCRIPT') task = await this.#runSetupScript(task);
      if (task?.status === 'SETTING_UP_SKILLS') task = await this.#setUpSkills(task);
      if (task?.status === 'STARTING_CONVERSATION') await this.#startConversation(task);
    } catch (err) {
      if (this.#stop.signal.aborted) return;
      const { failure, detail } = describeFailure(err);
      logger.warn({ taskId, failure, detail }, 'app conversation start task failed');
      await this.#update(taskId, { status: 'ERROR', failure, detail, secrets: {}, llmApiKey: null });
    }
  }

  async #chooseSandbox(task: StartTaskRow): Promise<StartTaskRow> {
    const request = task.request as AppConversationStartRequest;
    let sandboxId = request.sandbox_id ?? null;
    if (sandboxId) await findLiveSandbox(this.#ctx.db, sandboxId);
    else sandboxId = (await startSandbox(this.#ctx, { createdByUserId: task.createdByUserId })).id;
    return this.#update(task.id, { status: 'WAITING_FOR_SANDBOX', sandboxId });
  }

  async #waitForSandbox(task: StartTaskRow): Promise<StartTaskRow> {
    const target = await this.#agentServerOf(task);
    const request = task.request as AppConversationStartRequest;
    const status = request.selected_repository ? 'PREPARING_REPOSITORY' : 'STARTING_CONVERSATION';
    return this.#update(task.id, { status, agentServerUrl: target.baseUrl });
  }

  async #prepareRepository(task: StartTaskRow): Promise<StartTaskRow> {
    const request = task.request as AppConversationStartRequest & { selected_repository: string };
    const client = this.#ctx.agentClient(await this.#agentServerOf(task));
    const input = { request, secrets: task.secrets, workspace: await this.#workspaceOf(task), signal: this.#stop.signal };
    const { log, hasSetupScript } = await prepareRepository(client, input);
    return this.#update(task.id, { status: hasSetupScript ? 'RUNNING_SETUP_SCRIPT' : 'SETTING_UP_SKILLS', log: withLines(task.log, log) });
  }

  async #runSetupScript(task: StartTaskRow): Promise<StartTaskRow> {
    const client = this.#ctx.agentClient(await this.#agentServerOf(task));
    const log = await runSetupScript(client, await this.#conversationDir(task));
    return this.#update(task.id, { status: 'SETTING_UP_SKILLS', log: withLines(task.log, log) });
  }

  async #setUpSkills(task: StartTaskRow): Promise<StartTaskRow> {
    const client = this.#ctx.agentClient(await this.#agentServerOf(task));
    const log = await setUpSkills(client, await this.#conversationDir(task));
    return this.#update(task.id, { status: 'STARTING_CONVERSATION', log: withLines(task.log, log) });
  }

  /** The sandbox spec's working directory. */
  async #workspaceOf(task: StartTaskRow): Promise<string> {
    const [sandbox] = await this.#ctx.db
      .select({ workingDir: sandboxSpecs.workingDir })
      .from(sandboxes)
      .innerJoin(sandboxSpecs, eq(sandboxes.specId, sandboxSpecs.id))
      .where(eq(sandboxes.id, requireSandboxId(task)));
    return sandbox?.workingDir ?? '/workspace';
  }

  /** Where the conversation works: the repository's folder when it has one. */
  async #conversationDir(task: StartTaskRow): Promise<string> {
    return conversationWorkingDir(await this.#workspaceOf(task), task.request as AppConversationStartRequest, task.secrets);
  }

  async #startConversation(task: StartTaskRow): Promise<void> {
    const target = await this.#agentServerOf(task);
    const request = task.request as AppConversationStartRequest;
    const llm = await relayedLlm(this.#ctx.db, this.#ctx.settings, {
      conversationId: task.conversationId,
      sandboxId: requireSandboxId(task),
      model: chooseLlmModel(request, this.#ctx.settings),
      ownApiKey: task.llmApiKey,
    });
    await this.#ctx.agentClient(target).createConversation(
      agentConversationRequest({
        conversationId: task.conversationId,
        request,
        secrets: await brokerConversationSecrets(this.#ctx.db, { sandboxId: requireSandboxId(task), conversationId: task.conversationId }, task.secrets),
        settings: this.#ctx.settings,
        llm,
        workingDir: await this.#conversationDir(task),
      }),
    );
    const now = new Date();
    await this.#ctx.db.transaction(async (tx) => {
      await tx
        .insert(appConversations)
        .values({
          id: task.conversationId,
          createdByUserId: task.createdByUserId,
          sandboxId: requireSandboxId(task),
          title: request.title ?? null,
          llmModel: request.llm_model ?? this.#ctx.settings.llm.model,
          tags: request.tags ?? {},
          selectedRepository: request.selected_repository ?? null,
          selectedBranch: request.selected_branch ?? null,
          gitProvider: request.git_provider ?? null,
          trigger: request.trigger ?? null,
          prNumber: request.pr_number ?? [],
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing();
      const [ready] = await tx
        .update(appConversationStartTasks)
        .set({ status: 'READY', detail: null, secrets: {}, llmApiKey: null, updatedAt: now })
        .where(eq(appConversationStartTasks.id, task.id))
        .returning();
      if (ready) await recordEvent(tx, startTaskEvent(ready, task.status));
    });
  }

  #agentServerOf(task: StartTaskRow) {
    return waitForAgentServer(this.#ctx, requireSandboxId(task), {
      resume: 'always',
      timeoutMs: this.#ctx.settings.sandboxStartTimeoutMs,
      signal: this.#stop.signal,
    });
  }

  async #load(taskId: string): Promise<StartTaskRow | undefined> {
    const [task] = await this.#ctx.db.select().from(appConversationStartTasks).where(eq(appConversationStartTasks.id, taskId));
    return task;
  }

  /** Writes a step of the task; a new status records its lifecycle event in the same transaction. */
  async #update(taskId: string, values: Partial<StartTaskRow>): Promise<StartTaskRow> {
    return this.#ctx.db.transaction(async (tx) => {
      const [before] = await tx
        .select({ status: appConversationStartTasks.status })
        .from(appConversationStartTasks)
        .where(eq(appConversationStartTasks.id, taskId))
        .for('update');
      const [task] = await tx
        .update(appConversationStartTasks)
        .set({ ...values, updatedAt: new Date() })
        .where(eq(appConversationStartTasks.id, taskId))
        .returning();
      if (!task || !before) throw new Error(`start task ${taskId} vanished`);
      if (task.status !== before.status) await recordEvent(tx, startTaskEvent(task, before.status));
      return task;
    });
  }
}

/** The task's log with `lines` added. */
function withLines(log: string | null, lines: readonly string[]): string {
  return [...(log ? [log] : []), ...lines].join('\n');
}

function requireSandboxId(task: StartTaskRow): string {
  if (!task.sandboxId) throw new Error(`start task ${task.id} has no sandbox at step ${task.status}`);
  return task.sandboxId;
}

/** The error code `?wait=true` fails with, and a detail a person can act on. */
function describeFailure(err: unknown): { failure: StartTaskFailure; detail: string } {
  if (err instanceof DomainError) {
    return { failure: START_TASK_FAILURES.find((code) => code === err.code) ?? 'upstream', detail: err.message };
  }
  return { failure: 'upstream', detail: `Unexpected error: ${(err as Error).message}` };
}

/**
 * The conversations of one agent-server and their events, kept on disk:
 *
 *   <dataDir>/conversations/<uuid>/meta.json      settings and state, replaced atomically
 *   <dataDir>/conversations/<uuid>/events.ndjson  the event log (../store), opened on first use
 *   <dataDir>/conversations/<uuid>/events.ndjson.checkpoint  its index, so a large log opens fast
 *
 * Metadata lives in memory and is written through on every change; a conversation whose meta.json
 * cannot be read at start is logged and skipped, never fatal. A directory without meta.json is what
 * a crash leaves of a conversation being created (meta.json is written first) or deleted: it is
 * removed at start. Routes and the WebSocket stream call
 * the verbs here; unknown conversations and events are NotFoundErrors, bad input RequestValidationErrors.
 */
import type { AgentUser } from '../agent-user.js';
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MESSAGE_SEARCH_TEXT_VERSION, messageSearchText, nowTimestamp, type Event, type JsonValue } from '../../events/index.js';
import {
  BadRequestError,
  ConflictError,
  NotFoundError,
  RequestValidationError,
  UpstreamError,
  invalidValuesFromZod,
} from '../../errors/index.js';
import type { Page } from '../../contracts/paging.js';
import { logger } from '../../logger.js';
import { EventLogUnavailableError, openEventLog, type EventFilter, type EventLog, type EventQuery } from '../store/index.js';
import type { AgentRunner, ConfirmationResponse } from '../agent/index.js';
import { createLlmClient, LlmError } from '../agent/llm/index.js';
import { askAgent } from './ask-agent.js';
import { AtomicJsonFile } from './atomic-json-file.js';
import { isConversationId } from '../../contracts/agent-server/conversation-id.js';
import { pageConversations, type ConversationPageQuery } from './conversation-page.js';
import { createConversationRunner, llmConfigFrom, llmConfigOf } from './conversation-runner.js';
import { userMessageText, generateTitle } from './generate-title.js';
import { agentAnswerOf } from './final-response.js';
import { toConversationInfo } from './info.js';
import type { ConversationInfo } from '../../contracts/agent-server/conversation-info.js';
import { zipArchive } from './zip-archive.js';
import { messageEventFrom } from './message-event.js';
import { ConversationMetadataSchema, newConversationMetadata, type ConversationMetadata } from './metadata.js';
import {
  ConfirmationPolicySchema,
  ConversationExecutionStatusSchema,
  SendMessageRequestSchema,
  type ConfirmationPolicy,
  type ConversationExecutionStatus,
  type ForkConversationRequest,
  type GenerateTitleRequest,
  type SendMessageRequest,
  type StartConversationRequest,
  type Secrets,
  type UpdateConversationRequest,
} from '../../contracts/agent-server/conversation-requests.js';

const METADATA_FILE = 'meta.json';
const EVENTS_FILE = 'events.ndjson';
/** As in OpenHands: a batch get of more events than this is a 400. */
export const MAX_BATCH_EVENT_IDS = 100;
/** Events copied per batch when a conversation is forked, so a long history is never all in memory. */
const FORK_BATCH = 1000;

interface Conversation {
  metadata: ConversationMetadata;
  readonly directory: string;
  readonly metadataFile: AtomicJsonFile;
  /** Resolves once the conversation is durable; a second start with the same id waits for it. */
  created: Promise<void>;
  log?: Promise<EventLog<Event>>;
  /** The agent loop, built on first use from the conversation's settings. */
  runner?: Promise<AgentRunner>;
  /** Callers of `run` waiting for the loop to record `running`. */
  readonly runningWaiters: Set<() => void>;
}

export interface ConversationServiceOptions {
  dataDir: string;
  /** Who the agents' commands run as; the agent-server's own user when absent. */
  agentUser?: AgentUser;
}

export interface StartedConversation {
  info: ConversationInfo;
  /** False when a conversation with the requested id already existed; it is returned unchanged. */
  created: boolean;
}

export class ConversationService {
  private readonly conversations = new Map<string, Conversation>();
  private lastActivityMs = Date.now();

  private constructor(
    private readonly root: string,
    private readonly agentUser: AgentUser | undefined,
  ) {}

  static async open(options: ConversationServiceOptions): Promise<ConversationService> {
    const service = new ConversationService(join(options.dataDir, 'conversations'), options.agentUser);
    await mkdir(service.root, { recursive: true });
    for (const entry of await readdir(service.root, { withFileTypes: true })) {
      if (!entry.isDirectory() || !isConversationId(entry.name)) continue;
      const directory = join(service.root, entry.name);
      const metadata = await readMetadata(join(directory, METADATA_FILE));
      if (metadata === 'missing') await removeUnfinished(directory);
      else if (metadata?.id === entry.name) service.track(metadata);
    }
    // An agent that was running when the process stopped carries on where its log ends.
    for (const conversation of service.conversations.values()) {
      if (conversation.metadata.execution_status === 'running') void service.run(conversation.metadata.id);
    }
    return service;
  }

  /** Milliseconds since the last conversation change (or since start), for /server_info. */
  idleMillis(): number {
    return Date.now() - this.lastActivityMs;
  }

  async start(request: StartConversationRequest): Promise<StartedConversation> {
    const id = request.conversation_id ?? randomUUID();
    const existing = this.conversations.get(id);
    if (existing) {
      await existing.created;
      return { info: toConversationInfo(existing.metadata), created: false };
    }
    const conversation = this.track(newConversationMetadata(id, request, nowTimestamp()));
    conversation.created = mkdir(conversation.directory, { recursive: true }).then(() => conversation.metadataFile.save());
    try {
      await conversation.created;
    } catch (error) {
      this.conversations.delete(id);
      throw error;
    }
    if (request.initial_message) await this.postMessage(id, request.initial_message);
    return { info: toConversationInfo(conversation.metadata), created: true };
  }

  search(query: ConversationPageQuery): Page<ConversationInfo> {
    const page = pageConversations(this.allMetadata(), query);
    return { items: page.items.map(toConversationInfo), next_page_id: page.next_page_id };
  }

  count(status?: ConversationExecutionStatus): number {
    return this.allMetadata().filter((m) => status === undefined || m.execution_status === status).length;
  }

  /** The LLM model of each conversation, in no particular order. */
  configuredModels(): string[] {
    return this.allMetadata().map((m) => m.agent.llm.model);
  }

  /** One entry per id, in order, null for an unknown one. */
  batchGet(ids: readonly string[]): (ConversationInfo | null)[] {
    return ids.map((id) => {
      const conversation = this.find(id);
      return conversation ? toConversationInfo(conversation.metadata) : null;
    });
  }

  /** Throws the 404 for an unknown conversation. */
  assertExists(id: string): void {
    this.require(id);
  }

  /** OpenHands answers a GET of an unknown conversation with its generic "Not Found". */
  get(id: string): ConversationInfo {
    const conversation = this.find(id);
    if (!conversation) throw new NotFoundError();
    return toConversationInfo(conversation.metadata);
  }

  /** The agent's newest answer (its finish message or its last text), '' before it answered. */
  async agentFinalResponse(id: string): Promise<string> {
    const log = await this.requireLog(id);
    let pageId: string | undefined;
    do {
      const page = await log.search({ sortOrder: 'TIMESTAMP_DESC', limit: 100, pageId });
      for (const event of page.items) {
        const answer = agentAnswerOf(event);
        if (answer !== undefined) return answer;
      }
      pageId = page.nextPageId ?? undefined;
    } while (pageId);
    return '';
  }

  /** A side question to the conversation's LLM; nothing is recorded. An LLM failure is a 502. */
  async askAgent(id: string, question: string): Promise<string> {
    const conversation = this.require(id);
    const log = await this.openLog(conversation);
    const history = await log.readRange(0, log.size);
    try {
      return await askAgent(createLlmClient(llmConfigOf(conversation.metadata)), history, question);
    } catch (error) {
      if (error instanceof LlmError) throw new UpstreamError(`The LLM failed to answer: ${error.message}`);
      throw error;
    }
  }

  /**
   * A title for the conversation from its first user message (OpenHands' generate_title), by the
   * requested LLM or the conversation's own; the title is returned, not stored. A conversation
   * without a user message has nothing to name it by: a 409.
   */
  async generateTitle(id: string, request: GenerateTitleRequest): Promise<string> {
    const conversation = this.require(id);
    const log = await this.openLog(conversation);
    const message = await this.firstUserMessage(log);
    if (message === undefined) throw new ConflictError('The conversation has no user message to title it by');
    const llm = createLlmClient(request.llm ? llmConfigFrom(request.llm) : llmConfigOf(conversation.metadata));
    return generateTitle(llm, message, request.max_length);
  }

  /**
   * A new conversation with the settings and a copy of the whole history of `id`, idle, under a new
   * (or the requested) id; running it carries on from the copied history.
   */
  async fork(id: string, request: ForkConversationRequest): Promise<ConversationInfo> {
    const source = this.require(id);
    const forkId = request.id ?? randomUUID();
    if (this.conversations.has(forkId)) throw new ConflictError(`Conversation ${forkId} already exists`);
    const sourceLog = await this.openLog(source);
    const end = sourceLog.size;
    const now = nowTimestamp();
    const fork = this.track({
      ...source.metadata,
      id: forkId,
      title: request.title ?? source.metadata.title,
      tags: request.tags ?? source.metadata.tags,
      execution_status: 'idle',
      created_at: now,
      updated_at: now,
    });
    fork.created = mkdir(fork.directory, { recursive: true }).then(() => fork.metadataFile.save());
    try {
      await fork.created;
      for (let from = 0; from < end; from += FORK_BATCH) {
        await this.appendEvents(fork, await sourceLog.readRange(from, Math.min(end, from + FORK_BATCH)));
      }
    } catch (error) {
      await this.delete(forkId).catch(() => undefined);
      throw error;
    }
    return toConversationInfo(fork.metadata);
  }

  /** Adds or replaces secrets; the others are kept. */
  async updateSecrets(id: string, secrets: Secrets): Promise<void> {
    const conversation = this.require(id);
    await this.changeMetadata(conversation, { secrets: { ...conversation.metadata.secrets, ...secrets } });
  }

  /**
   * OpenHands switches to an LLM profile saved on the agent-server; this server keeps no profiles,
   * so every name is unknown, as OpenHands answers for a profile it does not have.
   */
  switchProfile(id: string, profileName: string): never {
    this.require(id);
    throw new NotFoundError(`Profile '${profileName}' not found`);
  }

  /**
   * The conversation as a ZIP (OpenHands' trajectory download): `<id hex>/meta.json` with its
   * settings, keys masked and secrets left out, and `<id hex>/events.ndjson` with every event.
   */
  async trajectory(id: string): Promise<Buffer> {
    const conversation = this.require(id);
    const log = await this.openLog(conversation);
    const lines: string[] = [];
    for await (const line of log.exportLines()) lines.push(line);
    const folder = conversation.metadata.id.replace(/-/g, '');
    const modified = new Date();
    return zipArchive([
      { name: `${folder}/meta.json`, data: Buffer.from(JSON.stringify(toConversationInfo(conversation.metadata), null, 2)), modified },
      { name: `${folder}/events.ndjson`, data: Buffer.from(lines.join('')), modified },
    ]);
  }

  async update(id: string, request: UpdateConversationRequest): Promise<void> {
    const conversation = this.require(id);
    await this.changeMetadata(conversation, {
      ...(request.title !== undefined && { title: request.title }),
      ...(request.tags != null && { tags: request.tags }),
    });
  }

  async delete(id: string): Promise<void> {
    const conversation = this.require(id);
    this.conversations.delete(conversation.metadata.id);
    await this.closeRunner(conversation);
    await conversation.metadataFile.settled();
    await this.closeLog(conversation);
    await rm(conversation.directory, { recursive: true, force: true });
  }

  /**
   * Starts the agent loop in the background and answers once it has recorded `running` (or had
   * nothing to do), so a client that polls the status right after never reads the one from before
   * the run. Running it while it runs changes nothing.
   */
  async run(id: string): Promise<void> {
    const conversation = this.require(id);
    const runner = await this.runnerOf(conversation);
    let markRunning!: () => void;
    const running = new Promise<void>((resolve) => (markRunning = resolve));
    conversation.runningWaiters.add(markRunning);
    const finished = runner.run().catch((error: unknown) => {
      logger.error({ err: error, conversationId: conversation.metadata.id }, 'the agent loop failed');
    });
    if (conversation.metadata.execution_status === 'running') markRunning();
    await Promise.race([running, finished]);
    conversation.runningWaiters.delete(markRunning);
  }

  /** Stops the loop at its next safe point and records a PauseEvent. */
  async pause(id: string): Promise<void> {
    const runner = await this.runnerOf(this.require(id));
    await runner.pause();
  }

  async respondToConfirmation(id: string, response: ConfirmationResponse): Promise<void> {
    const runner = await this.runnerOf(this.require(id));
    void runner.respondToConfirmation(response);
  }

  async setConfirmationPolicy(id: string, policy: ConfirmationPolicy): Promise<void> {
    const runner = await this.runnerOf(this.require(id));
    await runner.setConfirmationPolicy(policy);
  }

  async postMessage(id: string, request: SendMessageRequest): Promise<void> {
    await this.appendEvents(this.require(id), [messageEventFrom(request)]);
    if (request.run) await this.run(id);
  }

  /**
   * A message sent over the WebSocket: validated like the body of POST .../events, and, as in
   * OpenHands, it always asks the agent to run.
   */
  async sendMessage(id: string, message: unknown): Promise<void> {
    const parsed = SendMessageRequestSchema.safeParse(message);
    if (!parsed.success) throw new RequestValidationError(invalidValuesFromZod(parsed.error, 'body'));
    await this.postMessage(id, { ...parsed.data, run: true });
  }

  /** The state a WebSocket client receives first (as a `full_state` update). */
  async fullState(id: string): Promise<ConversationInfo> {
    return this.get(id);
  }

  /** The event log of a conversation, or undefined when there is no such conversation. */
  async eventLog(id: string): Promise<EventLog<Event> | undefined> {
    const conversation = this.find(id);
    return conversation ? this.openLog(conversation) : undefined;
  }

  async searchEvents(id: string, query: EventQuery): Promise<Page<Event>> {
    const page = await (await this.requireLog(id)).search(query);
    return { items: page.items, next_page_id: page.nextPageId };
  }

  async countEvents(id: string, filter: EventFilter): Promise<number> {
    return (await this.requireLog(id)).count(filter);
  }

  /** OpenHands answers an unknown conversation or event here with its generic "Not Found". */
  async getEvent(id: string, eventId: string): Promise<Event> {
    const conversation = this.find(id);
    const event = conversation ? await (await this.openLog(conversation)).get(eventId) : undefined;
    if (!event) throw new NotFoundError();
    return event;
  }

  /** One entry per id, in order, null for an unknown event; more than 100 ids is a 400. */
  async batchGetEvents(id: string, eventIds: readonly string[]): Promise<(Event | null)[]> {
    if (eventIds.length > MAX_BATCH_EVENT_IDS) {
      throw new BadRequestError(`Cannot request more than ${MAX_BATCH_EVENT_IDS} events at once, got ${eventIds.length}`);
    }
    const log = await this.requireLog(id);
    return Promise.all(eventIds.map(async (eventId) => (await log.get(eventId)) ?? null));
  }

  /** Every stored event as NDJSON lines, in append order. */
  async exportEvents(id: string): Promise<AsyncIterable<string>> {
    return (await this.requireLog(id)).exportLines();
  }

  /** Appends already validated events, ids and timestamps kept, all or none. */
  async importEvents(id: string, events: readonly Event[]): Promise<void> {
    await this.appendEvents(this.require(id), events);
  }

  /** Waits for pending metadata writes and closes every open event log. */
  async close(): Promise<void> {
    await Promise.all(
      [...this.conversations.values()].map(async (conversation) => {
        await this.closeRunner(conversation);
        await conversation.metadataFile.settled();
        await this.closeLog(conversation);
      }),
    );
  }

  private track(metadata: ConversationMetadata): Conversation {
    const directory = join(this.root, metadata.id);
    const conversation: Conversation = {
      metadata,
      directory,
      created: Promise.resolve(),
      runningWaiters: new Set(),
      metadataFile: new AtomicJsonFile(join(directory, METADATA_FILE), () => conversation.metadata),
    };
    this.conversations.set(metadata.id, conversation);
    return conversation;
  }

  /** Ids reach the service from routes (canonical) and from the WebSocket path (as typed). */
  private find(id: string): Conversation | undefined {
    return this.conversations.get(id.toLowerCase());
  }

  private require(id: string): Conversation {
    const conversation = this.find(id);
    if (!conversation) throw new NotFoundError('Conversation not found');
    return conversation;
  }

  private async firstUserMessage(log: EventLog<Event>): Promise<string | undefined> {
    let pageId: string | undefined;
    do {
      const page = await log.search({ kind: 'MessageEvent', source: 'user', sortOrder: 'TIMESTAMP', limit: 100, pageId });
      for (const event of page.items) {
        const text = userMessageText(event);
        if (text !== undefined) return text;
      }
      pageId = page.nextPageId ?? undefined;
    } while (pageId);
    return undefined;
  }

  private async requireLog(id: string): Promise<EventLog<Event>> {
    return this.openLog(this.require(id));
  }

  private allMetadata(): ConversationMetadata[] {
    return [...this.conversations.values()].map((c) => c.metadata);
  }

  private async changeMetadata(conversation: Conversation, change: Partial<ConversationMetadata>): Promise<void> {
    conversation.metadata = { ...conversation.metadata, ...change, updated_at: nowTimestamp() };
    this.lastActivityMs = Date.now();
    await conversation.metadataFile.save();
  }

  private async appendEvents(
    conversation: Conversation,
    events: readonly Event[],
    change: Partial<ConversationMetadata> = {},
  ): Promise<void> {
    const log = await this.openLog(conversation);
    try {
      await log.append(events);
    } catch (error) {
      // The log refuses appends after a failed write until it is reopened, which repairs its tail.
      if (error instanceof EventLogUnavailableError) await this.closeLog(conversation);
      throw error;
    }
    await this.changeMetadata(conversation, change);
  }

  private openLog(conversation: Conversation): Promise<EventLog<Event>> {
    if (!conversation.log) {
      const file = join(conversation.directory, EVENTS_FILE);
      const opening = conversation.created.then(() => openEventLog<Event>(file, { searchableText: messageSearchText, textVersion: MESSAGE_SEARCH_TEXT_VERSION }));
      // A log that failed to open is not cached, so the next request tries again.
      opening.catch(() => {
        if (conversation.log === opening) conversation.log = undefined;
      });
      conversation.log = opening;
    }
    return conversation.log;
  }

  private runnerOf(conversation: Conversation): Promise<AgentRunner> {
    if (!conversation.runner) {
      const creating = this.openLog(conversation).then((log) =>
        createConversationRunner(conversation.metadata, log, (key, value) => this.recordState(conversation, key, value), this.agentUser),
      );
      creating.catch(() => {
        if (conversation.runner === creating) conversation.runner = undefined;
      });
      conversation.runner = creating;
    }
    return conversation.runner;
  }

  /** The runner's state changes (it records them as events itself) mirrored into meta.json. */
  private recordState(conversation: Conversation, key: string, value: JsonValue): void {
    let change: Partial<ConversationMetadata> | undefined;
    if (key === 'execution_status') {
      const status = ConversationExecutionStatusSchema.safeParse(value);
      if (status.success) change = { execution_status: status.data };
    } else if (key === 'confirmation_policy') {
      const policy = ConfirmationPolicySchema.safeParse(value);
      if (policy.success) change = { confirmation_policy: policy.data };
    }
    if (!change || !this.conversations.has(conversation.metadata.id)) return;
    if (change.execution_status === 'running') for (const waiter of conversation.runningWaiters) waiter();
    this.changeMetadata(conversation, change).catch((error: unknown) =>
      logger.error({ err: error, conversationId: conversation.metadata.id }, 'saving conversation state failed'),
    );
  }

  private async closeRunner(conversation: Conversation): Promise<void> {
    const creating = conversation.runner;
    conversation.runner = undefined;
    if (!creating) return;
    try {
      await (await creating).close();
    } catch (error) {
      logger.warn({ err: error, conversationId: conversation.metadata.id }, 'closing an agent runner failed');
    }
  }

  private async closeLog(conversation: Conversation): Promise<void> {
    const opening = conversation.log;
    conversation.log = undefined;
    if (!opening) return;
    try {
      await (await opening).close();
    } catch (error) {
      logger.warn({ err: error, conversationId: conversation.metadata.id }, 'closing an event log failed');
    }
  }
}

/** The metadata in `file`; undefined when it cannot be read (logged), 'missing' when there is none. */
async function readMetadata(file: string): Promise<ConversationMetadata | undefined | 'missing'> {
  try {
    return ConversationMetadataSchema.parse(JSON.parse(await readFile(file, 'utf8')));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    logger.warn({ err: error, file }, 'skipping a conversation whose metadata cannot be read');
    return undefined;
  }
}

async function removeUnfinished(directory: string): Promise<void> {
  await rm(directory, { recursive: true, force: true });
  logger.info({ directory }, 'removed a conversation directory without meta.json, left by a crash');
}

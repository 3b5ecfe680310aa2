/**
 * The conversations of one agent-server and their events, kept on disk:
 *
 *   <dataDir>/conversations/<uuid>/meta.json      settings and state, replaced atomically
 *   <dataDir>/conversations/<uuid>/events.ndjson  the event log (../store), opened on first use
 *
 * Metadata lives in memory and is written through on every change; a conversation whose meta.json
 * cannot be read at start is logged and skipped, never fatal. Routes and the WebSocket stream call
 * the verbs here; unknown conversations and events are NotFoundErrors, bad input RequestValidationErrors.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PauseEventSchema, messageSearchText, nowTimestamp, type Event } from '../../events/index.js';
import { NotFoundError, RequestValidationError, validationItemsFromZod } from '../../http/errors.js';
import type { Page } from '../../http/paging.js';
import { logger } from '../../logger.js';
import { EventLogUnavailableError, openEventLog, type EventFilter, type EventLog, type EventQuery } from '../store/index.js';
import { AtomicJsonFile } from './atomic-json-file.js';
import { isConversationId } from './conversation-id.js';
import { pageConversations, type ConversationPageQuery } from './conversation-page.js';
import { toConversationInfo, type ConversationInfo } from './info.js';
import { messageEventFrom } from './message-event.js';
import { ConversationMetadataSchema, newConversationMetadata, type ConversationMetadata } from './metadata.js';
import {
  SendMessageRequestSchema,
  type ConversationExecutionStatus,
  type SendMessageRequest,
  type StartConversationRequest,
  type UpdateConversationRequest,
} from './requests.js';

const METADATA_FILE = 'meta.json';
const EVENTS_FILE = 'events.ndjson';

interface Conversation {
  metadata: ConversationMetadata;
  readonly directory: string;
  readonly metadataFile: AtomicJsonFile;
  /** Resolves once the conversation is durable; a second start with the same id waits for it. */
  created: Promise<void>;
  log?: Promise<EventLog<Event>>;
}

export interface ConversationServiceOptions {
  dataDir: string;
}

export interface StartedConversation {
  info: ConversationInfo;
  /** False when a conversation with the requested id already existed; it is returned unchanged. */
  created: boolean;
}

export class ConversationService {
  private readonly conversations = new Map<string, Conversation>();
  private lastActivityMs = Date.now();

  private constructor(private readonly root: string) {}

  static async open(options: ConversationServiceOptions): Promise<ConversationService> {
    const service = new ConversationService(join(options.dataDir, 'conversations'));
    await mkdir(service.root, { recursive: true });
    for (const entry of await readdir(service.root, { withFileTypes: true })) {
      if (!entry.isDirectory() || !isConversationId(entry.name)) continue;
      const metadata = await readMetadata(join(service.root, entry.name, METADATA_FILE));
      if (metadata?.id === entry.name) service.track(metadata);
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

  get(id: string): ConversationInfo {
    return toConversationInfo(this.require(id).metadata);
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
    await conversation.metadataFile.settled();
    await this.closeLog(conversation);
    await rm(conversation.directory, { recursive: true, force: true });
  }

  /** Records that the agent should run. The loop that acts on it is not part of this service. */
  async run(id: string): Promise<void> {
    const conversation = this.require(id);
    if (!conversation.metadata.run_requested) await this.changeMetadata(conversation, { run_requested: true });
  }

  /** Pauses the conversation and records a PauseEvent; pausing a paused conversation changes nothing. */
  async pause(id: string): Promise<void> {
    const conversation = this.require(id);
    if (conversation.metadata.execution_status === 'paused') return;
    await this.appendEvents(conversation, [PauseEventSchema.parse({ kind: 'PauseEvent' })], {
      execution_status: 'paused',
      run_requested: false,
    });
  }

  async postMessage(id: string, request: SendMessageRequest): Promise<void> {
    await this.appendEvents(this.require(id), [messageEventFrom(request)], request.run ? { run_requested: true } : {});
  }

  /**
   * A message sent over the WebSocket: validated like the body of POST .../events, and, as in
   * OpenHands, it always asks the agent to run.
   */
  async sendMessage(id: string, message: unknown): Promise<void> {
    const parsed = SendMessageRequestSchema.safeParse(message);
    if (!parsed.success) throw new RequestValidationError(validationItemsFromZod(parsed.error, ['body']));
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

  async getEvent(id: string, eventId: string): Promise<Event> {
    const event = await (await this.requireLog(id)).get(eventId);
    if (!event) throw new NotFoundError('Event not found');
    return event;
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
      const opening = conversation.created.then(() => openEventLog<Event>(file, { searchableText: messageSearchText }));
      // A log that failed to open is not cached, so the next request tries again.
      opening.catch(() => {
        if (conversation.log === opening) conversation.log = undefined;
      });
      conversation.log = opening;
    }
    return conversation.log;
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

async function readMetadata(file: string): Promise<ConversationMetadata | undefined> {
  try {
    return ConversationMetadataSchema.parse(JSON.parse(await readFile(file, 'utf8')));
  } catch (error) {
    logger.warn({ err: error, file }, 'skipping a conversation whose metadata cannot be read');
    return undefined;
  }
}

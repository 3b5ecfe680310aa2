/**
 * The conversations of one agent-server and their events, kept on disk:
 *
 *   <dataDir>/conversations/<uuid>/meta.json      settings and state, replaced atomically
 *   <dataDir>/conversations/<uuid>/events.ndjson  the event log (../store), opened on first use
 *   <dataDir>/conversations/<uuid>/events.ndjson.checkpoint  its index, so a large log opens fast
 *
 * Metadata lives in memory and is written through on every change; a conversation whose meta.json
 * cannot be read at start is logged and skipped, never fatal. A directory without meta.json is what
 * a crash leaves of a conversation being created (meta.json is written first): it is removed at
 * start. A delete first refuses new writes and waits for those running (write-guard.ts), then
 * renames the directory to a tombstone (`.deleted-<uuid>-<random>`) in one step, and only then
 * stops the agent and removes the files: a crash at any point leaves the conversation whole or
 * gone, and tombstones are removed at start.
 *
 * The registry is the state that outlives a request (open logs, running agent loops, pending
 * metadata writes); the verbs in ../services/ read and change it one request at a time.
 */
import { LiveFrames, streamingDeltaEvent } from './live-frames.js';
import type { AgentUser } from '../agent-user.js';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MESSAGE_SEARCH_TEXT_VERSION, messageSearchText, nowTimestamp, type Event } from '../../events/index.js';
import { NotFoundError } from '../../errors/index.js';
import { logger } from '../../logger.js';
import { EventLogUnavailableError, openEventLog, type EventLog } from '../store/index.js';
import type { AgentRunner, RunnerStateChange } from '../agent/index.js';
import { AtomicJsonFile, syncDirectory } from './atomic-json-file.js';
import { isConversationId } from '../../contracts/agent-server/conversation-id.js';
import { createConversationRunner } from './conversation-runner.js';
import type { ConversationStats } from '../../contracts/agent-server/llm-metrics.js';
import type { CallRecord } from '../agent/llm/usage-metrics.js';
import { ConversationMetadataSchema, type ConversationMetadata } from './metadata.js';
import { createWriteGuard, type WriteGuard } from './write-guard.js';
import { createSecretVault, type SecretVault } from '../secrets/secret-vault.js';
import { withMaskedAppends } from '../secrets/masked-event-log.js';
import { conversationInstructions } from '../instructions/conversation-skills.js';

const METADATA_FILE = 'meta.json';
const EVENTS_FILE = 'events.ndjson';
const TOMBSTONE_PREFIX = '.deleted-';

export interface Conversation {
  metadata: ConversationMetadata;
  readonly directory: string;
  readonly metadataFile: AtomicJsonFile;
  /** Resolves once the conversation is durable; a second start with the same id waits for it. */
  created: Promise<void>;
  log?: Promise<EventLog<Event>>;
  /** The agent loop, built on first use from the conversation's settings. */
  runner?: Promise<AgentRunner>;
  /** Callers of `runConversation` waiting for the loop to record `running`. */
  readonly runningWaiters: Set<() => void>;
  /** Metadata saves and event appends pass it; a delete closes it. */
  readonly writes: WriteGuard;
  /** Its secrets' values for the shell, and the masking of them in every event appended. */
  readonly secrets: SecretVault;
}

export interface ConversationRegistryOptions {
  dataDir: string;
  /** Hears every LLM call of every conversation (the agent-server's /metrics). */
  onLlmCall?: (call: CallRecord) => void;
  /** Who the agents' commands run as; the agent-server's own user when absent. */
  agentUser?: AgentUser;
  /** Values every conversation masks besides its own secrets (the spec's secret initial_env). */
  maskedValues?: readonly string[];
}

export class ConversationRegistry {
  private readonly conversations = new Map<string, Conversation>();
  /** The pieces of streamed LLM answers, for the event sockets (never stored). */
  readonly live = new LiveFrames();
  /** Deletes in progress by id: a new conversation under the same id waits for its directory. */
  private readonly removals = new Map<string, Promise<void>>();
  private lastActivityMs = Date.now();

  private constructor(
    private readonly root: string,
    /** Who the agents' commands run as; the agent-server's own user when absent. */
    readonly agentUser: AgentUser | undefined,
    private readonly onLlmCall: (call: CallRecord) => void,
    private readonly maskedValues: readonly string[],
  ) {}

  static async open(options: ConversationRegistryOptions): Promise<ConversationRegistry> {
    const registry = new ConversationRegistry(join(options.dataDir, 'conversations'), options.agentUser, options.onLlmCall ?? (() => undefined), options.maskedValues ?? []);
    await mkdir(registry.root, { recursive: true });
    for (const entry of await readdir(registry.root, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name.startsWith(TOMBSTONE_PREFIX)) await rm(join(registry.root, entry.name), { recursive: true, force: true });
      if (!entry.isDirectory() || !isConversationId(entry.name)) continue;
      const directory = join(registry.root, entry.name);
      const metadata = await readMetadata(join(directory, METADATA_FILE));
      if (metadata === 'missing') await removeUnfinished(directory);
      else if (metadata?.id === entry.name) registry.track(metadata);
    }
    return registry;
  }

  /**
   * Milliseconds since the last conversation change (or since start), for /server_info; 0 while any
   * agent runs, since one busy in a long command changes nothing until it ends and is not idle.
   */
  idleMillis(): number {
    for (const conversation of this.conversations.values()) {
      if (conversation.metadata.execution_status === 'running') return 0;
    }
    return Date.now() - this.lastActivityMs;
  }

  all(): ConversationMetadata[] {
    return [...this.conversations.values()].map((c) => c.metadata);
  }

  /** The conversation under exactly this id (as a start or fork request names it). */
  get(id: string): Conversation | undefined {
    return this.conversations.get(id);
  }

  /** Ids reach the verbs from routes (canonical) and from the WebSocket path (as typed). */
  find(id: string): Conversation | undefined {
    return this.conversations.get(id.toLowerCase());
  }

  require(id: string): Conversation {
    const conversation = this.find(id);
    if (!conversation) throw new NotFoundError('Conversation not found');
    return conversation;
  }

  async requireLog(id: string): Promise<EventLog<Event>> {
    return this.openLog(this.require(id));
  }

  /** Tracks a new conversation and starts writing its directory and meta.json (`created`). */
  create(metadata: ConversationMetadata): Conversation {
    const conversation = this.track(metadata);
    const removal = this.removals.get(metadata.id) ?? Promise.resolve();
    conversation.created = removal
      .then(() => mkdir(conversation.directory, { recursive: true }))
      .then(() => conversation.metadataFile.save());
    return conversation;
  }

  /** Stops tracking a conversation whose creation failed; nothing of it is open yet. */
  forget(id: string): void {
    this.conversations.delete(id);
  }

  /**
   * Refuses its writes from now on (404) and waits for those running, moves its directory to a
   * tombstone in one rename, then stops its agent, closes its log and removes the tombstone.
   */
  async remove(conversation: Conversation): Promise<void> {
    const id = conversation.metadata.id;
    if (this.conversations.get(id) === conversation) this.conversations.delete(id);
    const removal = this.removeFromDisk(conversation);
    this.removals.set(id, removal);
    try {
      await removal;
    } finally {
      if (this.removals.get(id) === removal) this.removals.delete(id);
    }
  }

  private async removeFromDisk(conversation: Conversation): Promise<void> {
    await conversation.writes.close();
    await conversation.created.catch(() => undefined);
    await conversation.metadataFile.settled();
    const tombstone = join(this.root, `${TOMBSTONE_PREFIX}${conversation.metadata.id}-${randomBytes(4).toString('hex')}`);
    const buried = await rename(conversation.directory, tombstone).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    if (buried) await syncDirectory(this.root);
    await this.closeRunner(conversation);
    await this.closeLog(conversation);
    if (buried) await rm(tombstone, { recursive: true, force: true });
  }

  changeMetadata(conversation: Conversation, change: Partial<ConversationMetadata>): Promise<void> {
    return conversation.writes.run(() => this.saveMetadata(conversation, change));
  }

  appendEvents(conversation: Conversation, events: readonly Event[], change: Partial<ConversationMetadata> = {}): Promise<void> {
    return conversation.writes.run(async () => {
      const log = await this.openLog(conversation);
      try {
        await log.append(events);
      } catch (error) {
        // The log refuses appends after a failed write until it is reopened, which repairs its tail.
        if (error instanceof EventLogUnavailableError) await this.closeLog(conversation);
        throw error;
      }
      await this.saveMetadata(conversation, change);
    });
  }

  private async saveMetadata(conversation: Conversation, change: Partial<ConversationMetadata>): Promise<void> {
    conversation.metadata = { ...conversation.metadata, ...change, updated_at: nowTimestamp() };
    this.lastActivityMs = Date.now();
    await conversation.metadataFile.save();
  }

  openLog(conversation: Conversation): Promise<EventLog<Event>> {
    if (conversation.writes.closed) return Promise.reject(new NotFoundError('Conversation not found'));
    if (!conversation.log) {
      const file = join(conversation.directory, EVENTS_FILE);
      const opening = conversation.created
        .then(() => openEventLog<Event>(file, { searchableText: messageSearchText, textVersion: MESSAGE_SEARCH_TEXT_VERSION }))
        .then((log) => withMaskedAppends(log, conversation.secrets.mask));
      // A log that failed to open is not cached, so the next request tries again.
      opening.catch(() => {
        if (conversation.log === opening) conversation.log = undefined;
      });
      conversation.log = opening;
    }
    return conversation.log;
  }

  runnerOf(conversation: Conversation): Promise<AgentRunner> {
    if (!conversation.runner) {
      const creating = Promise.all([this.openLog(conversation), conversationInstructions(conversation, this.agentUser)]).then(([log, instructions]) =>
        createConversationRunner(
          conversation.metadata,
          log,
          (change) => this.recordState(conversation, change),
          {
            onStats: (stats) => this.recordStats(conversation, stats),
            onCall: this.onLlmCall,
            onDelta: (delta) => {
              const frame = streamingDeltaEvent(delta);
              if (frame) this.live.publish(conversation.metadata.id, frame);
            },
          },
          this.agentUser,
          conversation.secrets,
          instructions,
        ),
      );
      creating.catch(() => {
        if (conversation.runner === creating) conversation.runner = undefined;
      });
      conversation.runner = creating;
    }
    return conversation.runner;
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
      writes: createWriteGuard(),
      secrets: createSecretVault(metadata.secrets, this.maskedValues),
      metadataFile: new AtomicJsonFile(join(directory, METADATA_FILE), () => conversation.metadata),
    };
    this.conversations.set(metadata.id, conversation);
    return conversation;
  }

  /** The runner's state changes (it records them as events itself) mirrored into meta.json. */
  private recordState(conversation: Conversation, change: RunnerStateChange): void {
    if (!this.conversations.has(conversation.metadata.id)) return;
    if (change.key === 'execution_status' && change.value === 'running') for (const waiter of conversation.runningWaiters) waiter();
    const metadataChange: Partial<ConversationMetadata> =
      change.key === 'execution_status' ? { execution_status: change.value } : { confirmation_policy: change.value };
    this.changeMetadata(conversation, metadataChange).catch((error: unknown) =>
      logger.error({ err: error, conversationId: conversation.metadata.id }, 'saving conversation state failed'),
    );
  }

  /** Written through with the next metadata save; not an activity (a running agent is busy anyway). */
  private recordStats(conversation: Conversation, stats: ConversationStats): void {
    if (!this.conversations.has(conversation.metadata.id)) return;
    conversation.metadata = { ...conversation.metadata, stats };
    conversation.metadataFile.save().catch((error: unknown) =>
      logger.error({ err: error, conversationId: conversation.metadata.id }, 'saving conversation stats failed'),
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

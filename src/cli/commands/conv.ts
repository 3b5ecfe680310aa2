import { type AppConversation, type AppConversationStartTask, type ConversationEvent, iteratePages } from '../../client/index.js';
import { EVENT_KINDS } from '../../events/index.js';
import { CliError, EXIT_OK, UsageError } from '../cli-error.js';
import { collectPages } from '../collect.js';
import { type Command, type CommandContext, flag, integerOption, stringOption } from '../command.js';
import { formatEventLine } from '../event-line.js';
import { formatFields, formatTable, formatTime, orDash } from '../format.js';
import { noConversation, noSandbox, orNotFound } from '../not-found.js';
import { Progress } from '../progress.js';
import { waitFor } from '../wait.js';

const DEFAULT_WAIT_SECONDS = 300;

function printConversation(ctx: CommandContext, conversation: AppConversation): void {
  if (ctx.json) return ctx.out.json(conversation);
  ctx.out.line(
    formatFields([
      ['id', conversation.id],
      ['title', orDash(conversation.title)],
      ['sandbox', conversation.sandbox_id],
      ['sandbox status', orDash(conversation.sandbox_status)],
      ['execution', orDash(conversation.execution_status)],
      ['model', orDash(conversation.llm_model)],
      ['url', orDash(conversation.conversation_url)],
      ['created', formatTime(conversation.created_at)],
      ['updated', formatTime(conversation.updated_at)],
    ]),
  );
}

function printTask(ctx: CommandContext, task: AppConversationStartTask): void {
  if (ctx.json) return ctx.out.json(task);
  ctx.out.line(
    formatFields([
      ['start task', task.id],
      ['status', task.status],
      ['conversation', orDash(task.app_conversation_id)],
      ['sandbox', orDash(task.sandbox_id)],
      ['created', formatTime(task.created_at)],
    ]),
  );
}

async function readTask(ctx: CommandContext, id: string): Promise<AppConversationStartTask> {
  const [task] = await ctx.client.appConversations.startTasks.batchGet([id]);
  if (!task) throw new CliError(`start task ${id} is gone`);
  return task;
}

const start: Command = {
  name: ['conv', 'start'],
  summary: 'Start a conversation with a first message',
  usage: '"<message>" [--sandbox <sandbox>] [--title <title>] [--model <model>] [--wait [--timeout <seconds>]]',
  details:
    'Answers at once with the start task; with --wait it returns the conversation once it is ready (exit 1 when the start fails or times out). ' +
    "The agent calls the server's LLM (LLM_MODEL, LLM_BASE_URL) through the control plane's LLM relay, which adds LLM_API_KEY: the key never enters the sandbox, " +
    "and LLM_BASE_URL is as the server's host reaches it, so http://127.0.0.1:4000/v1 (a LiteLLM proxy, Ollama) works, for network none sandboxes too. " +
    "An LLM that cannot be reached or has no key ends the conversation in error at once: 'sandboxctl conv events <conversation>' shows why.",
  options: {
    sandbox: { type: 'string', value: '<sandbox>', help: 'Run in this sandbox (default: a new one)' },
    title: { type: 'string', value: '<title>', help: 'Title of the conversation' },
    model: { type: 'string', value: '<model>', help: "LLM model (default: the server's)" },
    wait: { type: 'boolean', help: 'Wait until the conversation is ready, showing progress on stderr' },
    timeout: { type: 'string', value: '<seconds>', help: `How long --wait waits (default ${DEFAULT_WAIT_SECONDS})` },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx, args) {
    const text = args.positionals[0]!;
    if (text.trim() === '') throw new UsageError('the message is empty');
    const timeoutSeconds = integerOption(args, 'timeout', { min: 1 }) ?? DEFAULT_WAIT_SECONDS;
    const sandboxId = stringOption(args, 'sandbox');
    // The server takes any id and fails the start task later; a typo should fail here, at once.
    if (sandboxId !== undefined && (await ctx.client.sandboxes.batchGet([sandboxId]))[0] == null) throw new CliError(noSandbox(sandboxId));
    const task = await ctx.client.appConversations.start({
      initial_message: { role: 'user', content: [{ type: 'text', text }], run: true },
      sandbox_id: sandboxId,
      title: stringOption(args, 'title'),
      llm_model: stringOption(args, 'model'),
    });
    if (!flag(args, 'wait')) {
      printTask(ctx, task);
      return EXIT_OK;
    }
    const progress = new Progress(ctx.out.stderr);
    const ready = await waitFor({
      progress,
      timeoutMs: timeoutSeconds * 1000,
      initial: task,
      read: () => readTask(ctx, task.id),
      state: (current) => (current.status === 'READY' ? 'done' : current.status === 'ERROR' ? 'failed' : 'pending'),
      describe: (current) => `conversation start ${current.id}: ${current.status}`,
      failure: (current) => `the conversation did not start: ${current.detail ?? 'no detail given'} (start task ${current.id})`,
      timeout: (current, elapsed) => `the conversation is still ${current.status} after ${elapsed}: wait longer with --timeout (start task ${current.id})`,
    });
    progress.finish(`conversation ${ready.app_conversation_id} is ready`);
    printConversation(ctx, await ctx.client.appConversations.get(ready.app_conversation_id!));
    return EXIT_OK;
  },
};

const ls: Command = {
  name: ['conv', 'ls'],
  summary: 'List conversations, newest first',
  usage: '[--limit <n>]',
  options: { limit: { type: 'string', value: '<n>', help: 'At most this many (default: all)' } },
  positionals: { min: 0, max: 0 },
  async run(ctx, args) {
    const limit = integerOption(args, 'limit', { min: 1 });
    const conversations = await collectPages((page) => ctx.client.appConversations.search(page), limit);
    if (ctx.json) {
      ctx.out.json(conversations);
      return EXIT_OK;
    }
    ctx.out.line(
      formatTable(
        ['ID', 'TITLE', 'SANDBOX', 'SANDBOX STATUS', 'EXECUTION', 'CREATED'],
        conversations.map((c) => [
          c.id,
          orDash(c.title),
          c.sandbox_id,
          orDash(c.sandbox_status),
          orDash(c.execution_status),
          formatTime(c.created_at),
        ]),
      ),
    );
    return EXIT_OK;
  },
};

/** The `full_state` snapshot a stream starts with is no stored event: it is not printed. */
function isStateSnapshot(event: ConversationEvent): boolean {
  return event.kind === 'ConversationStateUpdateEvent' && event.key === 'full_state';
}

/** Execution statuses after which the agent does nothing more until someone asks it again. */
const ENDED_STATUSES: ReadonlySet<string> = new Set(['finished', 'error', 'stuck']);

/** Whether the event records the agent reaching one of ENDED_STATUSES. */
function isEnd(event: ConversationEvent): boolean {
  return event.kind === 'ConversationStateUpdateEvent' && event.key === 'execution_status' && ENDED_STATUSES.has(String(event.value));
}

const events: Command = {
  name: ['conv', 'events'],
  summary: "Print a conversation's events, and with --follow the new ones as they happen",
  usage: '<conversation> [--kind <kind>] [--follow [--keep-following]]',
  details: [
    'One line per event: time (UTC), source, kind and a short text; --json prints each event as one JSON line (NDJSON).',
    '--follow prints new events as they happen until the agent finishes (execution status finished, error or stuck; at',
    'once when it already has), reconnecting where it left off when the connection drops; with --keep-following it',
    'goes on until Ctrl+C.',
  ].join('\n'),
  options: {
    kind: { type: 'string', value: '<kind>', help: 'Only events of this kind, e.g. MessageEvent or ActionEvent' },
    follow: { type: 'boolean', short: 'f', help: 'Keep printing new events until the agent finishes' },
    'keep-following': { type: 'boolean', help: 'With --follow: go on after the agent finishes, until Ctrl+C' },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx, args) {
    const id = args.positionals[0]!;
    const kind = stringOption(args, 'kind');
    if (kind !== undefined && !(EVENT_KINDS as readonly string[]).includes(kind)) {
      throw new UsageError(`unknown event kind "${kind}": one of ${EVENT_KINDS.join(', ')}`);
    }
    // Ids printed so far: a reconnect or out-of-order timestamps must not print an event twice.
    const printed = new Set<string>();
    let lastId: string | undefined;
    const print = (event: ConversationEvent) => {
      if (event.id !== undefined) {
        if (printed.has(event.id)) return;
        printed.add(event.id);
        lastId = event.id;
      }
      if (ctx.json) ctx.out.ndjson(event);
      else ctx.out.line(formatEventLine(event));
    };
    const history = iteratePages((pageId) =>
      orNotFound(ctx.client.appConversations.searchEvents(id, { kind, page_id: pageId }), noConversation(id)),
    );
    for await (const event of history) print(event);
    if (!flag(args, 'follow')) return EXIT_OK;
    const keepFollowing = flag(args, 'keep-following');
    if (!keepFollowing && (await hasEnded(ctx, id))) {
      // Ended before the stream would open: print what came after the history was read, and stop.
      for await (const event of iteratePages((pageId) => ctx.client.appConversations.searchEvents(id, { kind, page_id: pageId }))) print(event);
      return EXIT_OK;
    }
    const live = ctx.client.appConversations.followEvents(id, { afterEventId: lastId, fromStart: lastId === undefined });
    for await (const event of live) {
      if (isStateSnapshot(event)) continue;
      if (kind === undefined || event.kind === kind) print(event);
      if (!keepFollowing && isEnd(event)) break;
    }
    return EXIT_OK;
  },
};

/** Whether the conversation's agent has finished, as its agent-server says now. */
async function hasEnded(ctx: CommandContext, id: string): Promise<boolean> {
  const [conversation] = await ctx.client.appConversations.batchGet([id]);
  return conversation?.execution_status != null && ENDED_STATUSES.has(conversation.execution_status);
}

export const convCommands: Command[] = [start, ls, events];

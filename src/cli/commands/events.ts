import { iteratePages, type LifecycleEvent, type LifecycleEventType } from '../../client/index.js';
import { LIFECYCLE_EVENT_TYPES } from '../../contracts/lifecycle-event.js';
import { EXIT_OK, UsageError } from '../cli-error.js';
import { type Command, flag, stringOption, stringsOption } from '../command.js';
import { formatTime, oneLine } from '../format.js';

const TYPE_WIDTH = 34;
const DETAIL_LIMIT = 100;

/** One readable line per lifecycle event: time, type, subject, status change, detail. */
export function formatLifecycleEvent(event: LifecycleEvent): string {
  const change = event.previous_status ? `${event.previous_status} -> ${event.status ?? ''}` : (event.status ?? '');
  return [formatTime(event.timestamp), event.type.padEnd(TYPE_WIDTH), event.subject_id, change, oneLine(event.status_detail ?? '', DETAIL_LIMIT)]
    .join('  ')
    .trimEnd();
}

function eventTypes(values: string[]): LifecycleEventType[] {
  for (const value of values) {
    if (!(LIFECYCLE_EVENT_TYPES as readonly string[]).includes(value)) {
      throw new UsageError(`unknown event type "${value}": one of ${LIFECYCLE_EVENT_TYPES.join(', ')}`);
    }
  }
  return values as LifecycleEventType[];
}

const events: Command = {
  name: ['events'],
  summary: 'Print lifecycle events (sandbox and start-task status changes, snapshot progress), and with --follow the new ones as they happen',
  usage: '[--sandbox <sandbox>] [--type <type>]... [--follow]',
  details: [
    'One line per event, oldest first: time (UTC), type, subject id, status change and detail; --json prints each event as one JSON line (NDJSON).',
    '--follow keeps the stream open (Ctrl+C ends it) and reconnects where it left off when the connection drops.',
  ].join('\n'),
  options: {
    sandbox: { type: 'string', value: '<sandbox>', help: 'Only events of this sandbox' },
    type: { type: 'string', multiple: true, value: '<type>', help: 'Only events of this type, e.g. sandbox.running (repeatable)' },
    follow: { type: 'boolean', short: 'f', help: 'Keep printing new events as they happen' },
  },
  positionals: { min: 0, max: 0 },
  async run(ctx, args) {
    const sandboxId = stringOption(args, 'sandbox');
    const types = eventTypes(stringsOption(args, 'type'));
    const follow = flag(args, 'follow');
    // Read before the history: whatever commits after it has a higher id, so following from here
    // (or from the last event printed, if later) misses nothing and repeats nothing.
    let after = follow ? Number(await ctx.client.events.latestId()) : 0;
    const print = (event: LifecycleEvent) => {
      after = Math.max(after, Number(event.id));
      if (ctx.json) ctx.out.ndjson(event);
      else ctx.out.line(formatLifecycleEvent(event));
    };
    const history = iteratePages((pageId) => ctx.client.events.search({ sandbox_id: sandboxId, type: types, page_id: pageId }));
    for await (const event of history) print(event);
    if (!follow) return EXIT_OK;
    for await (const event of ctx.client.events.follow({ afterEventId: String(after), sandboxId, types })) print(event);
    return EXIT_OK;
  },
};

export const eventCommands: Command[] = [events];

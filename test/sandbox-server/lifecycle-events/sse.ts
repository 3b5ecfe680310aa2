import { LifecycleEventSchema, type LifecycleEvent } from '../../../src/sandbox-server/models/lifecycle-event.js';

/** The lifecycle events of a Server-Sent Events body, read as they arrive and checked against their model. */
export class SseReader {
  private buffer = '';
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
  }

  /** The next `count` messages with an id, as { id, data }; comments (keepalives) are skipped. */
  async take(count: number): Promise<{ id: string; data: LifecycleEvent }[]> {
    const messages: { id: string; data: LifecycleEvent }[] = [];
    while (messages.length < count) {
      const end = this.buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        const fields = new Map<string, string>();
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':');
          if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
        }
        const id = fields.get('id');
        if (id !== undefined) messages.push({ id, data: LifecycleEventSchema.parse(JSON.parse(fields.get('data') ?? 'null')) });
        continue;
      }
      const { value, done } = await this.reader.read();
      if (done) throw new Error(`stream ended after ${messages.length} of ${count} messages`);
      this.buffer += this.decoder.decode(value, { stream: true });
    }
    return messages;
  }

  async cancel(): Promise<void> {
    await this.reader.cancel();
  }
}

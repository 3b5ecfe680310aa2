/**
 * Feeds one WebSocket from one conversation's event log.
 *
 * Invariants:
 * - The subscriber owns a cursor: the position of the next event to send. It only moves forward,
 *   by exactly the events just sent, so each event is sent once, in append order, with no gap.
 * - One pump at a time: an append notification while the pump runs is not lost, because the pump
 *   loops until the cursor reaches the log's size, checked after every read. This is what makes a
 *   replay and the live events that land during it one gap-free, duplicate-free sequence.
 * - The append path never waits for a socket: the log's listener only starts the pump. Events not
 *   yet sent wait in the log, not in memory, so a slow subscriber costs its socket buffer and no more.
 * - While the socket holds more than `maxBufferedBytes`, the pump sends nothing more until it has
 *   flushed, so the buffer never exceeds that by more than one event, and a long replay goes at
 *   the client's speed instead of failing it. A socket that does not flush within
 *   `slowSubscriberTimeoutMs` belongs to a stalled client, which is closed with 1013.
 */
import { WebSocket } from 'ws';
import { logger } from '../../logger.js';
import type { EventLog } from '../store/index.js';
import { StreamCloseCode } from './close-codes.js';

export interface SubscriberLimits {
  maxBufferedBytes: number;
  slowSubscriberTimeoutMs: number;
}

/** Events read from the log at a time. */
const READ_BATCH_EVENTS = 100;

export class EventSubscriber {
  private pumping = false;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly log: EventLog,
    private cursor: number,
    private readonly limits: SubscriberLimits,
    private readonly conversationId: string,
  ) {}

  /** Sends `firstFrame`, then every event from the cursor on, then each event as it is appended. */
  start(firstFrame: object): void {
    if (!this.open) return;
    this.socket.send(JSON.stringify(firstFrame));
    this.unsubscribe = this.log.onAppend(() => void this.pump());
    void this.pump();
  }

  /**
   * Sends a frame that is not in the log (a piece of a streamed LLM answer) at once. It is dropped
   * while the socket is backed up: such pieces are a preview, and the final event follows in the log.
   */
  sendLive(frame: object): void {
    if (!this.open || this.socket.bufferedAmount > this.limits.maxBufferedBytes) return;
    this.socket.send(JSON.stringify(frame));
  }

  /** Stops feeding the socket and lets go of the log. Safe to call more than once. */
  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  close(code: number, reason: string): void {
    this.stop();
    this.socket.close(code, reason);
  }

  private get open(): boolean {
    return !this.stopped && this.socket.readyState === WebSocket.OPEN;
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.open && this.cursor < this.log.size) {
        // The stored line is the event's JSON text already: sent as is, not parsed and rewritten per subscriber.
        const lines = await this.log.readLines(this.cursor, Math.min(this.log.size, this.cursor + READ_BATCH_EVENTS));
        for (const line of lines) {
          if (!this.open) return;
          const flushed = this.send(line);
          this.cursor++;
          if (this.socket.bufferedAmount > this.limits.maxBufferedBytes && !(await this.flushedInTime(flushed))) return;
        }
      }
    } catch (error) {
      logger.error({ err: error, conversationId: this.conversationId }, 'event stream: could not read the event log');
      this.close(StreamCloseCode.internalError, 'could not read the event log');
    } finally {
      this.pumping = false;
    }
  }

  /** Resolves once the frame has left the socket buffer, or the socket has closed. */
  private send(frame: string): Promise<void> {
    return new Promise((resolve) => this.socket.send(frame, () => resolve()));
  }

  /** Waits for `flushed`; false when the socket closed meanwhile, or when it stalled (then it closes it). */
  private async flushedInTime(flushed: Promise<void>): Promise<boolean> {
    const drained = await settlesWithin(flushed, this.limits.slowSubscriberTimeoutMs);
    if (!this.open) return false;
    if (drained) return true;
    logger.warn({ conversationId: this.conversationId, bufferedBytes: this.socket.bufferedAmount }, 'event stream: closing a stalled subscriber');
    this.close(StreamCloseCode.tooSlow, 'subscriber too slow; reconnect with after_event_id');
    return false;
  }
}

/** Whether `promise` settles within `ms` milliseconds. */
function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

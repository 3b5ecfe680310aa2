import { describe, expect, it } from 'vitest';
import { type Clock, WorkQueue } from '../../../src/sandbox-server/reconciler/work-queue.js';

/** A clock that moves only when told to, firing the timers that fall due on the way. */
class FakeClock implements Clock {
  private time = 0;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  private nextId = 1;

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + delayMs, callback });
    return id;
  }

  clearTimer(timer: unknown): void {
    this.timers.delete(timer as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers].filter(([, t]) => t.at <= end).sort(([, a], [, b]) => a.at - b.at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].callback();
    }
    this.time = end;
  }
}

function setup() {
  const clock = new FakeClock();
  let wakes = 0;
  const queue = new WorkQueue<string>({ clock, onReady: () => wakes++, backoff: { baseMs: 100, maxMs: 1_000 } });
  return { clock, queue, wakes: () => wakes };
}

describe('WorkQueue', () => {
  it('hands out each added key once, in order, however often it was added', () => {
    const { queue, wakes } = setup();
    queue.add('a');
    queue.add('b');
    queue.add('a');

    expect(queue.take()).toEqual(['a', 'b']);
    expect(queue.take()).toEqual([]);
    expect(wakes()).toBe(2);
  });

  it('holds a key added after a delay until the clock reaches it', () => {
    const { clock, queue, wakes } = setup();
    queue.addAfter('a', 50);

    clock.advance(49);
    expect(queue.take()).toEqual([]);
    expect(wakes()).toBe(0);
    clock.advance(1);
    expect(wakes()).toBe(1);
    expect(queue.take()).toEqual(['a']);
  });

  it('keeps the earliest of several delays for one key, and add() makes a waiting key ready at once', () => {
    const { clock, queue } = setup();
    queue.addAfter('a', 100);
    queue.addAfter('a', 30);
    queue.addAfter('a', 200);
    clock.advance(30);
    expect(queue.take()).toEqual(['a']);
    clock.advance(500);
    expect(queue.take()).toEqual([]);

    queue.addAfter('b', 100);
    queue.add('b');
    expect(queue.take()).toEqual(['b']);
    clock.advance(500);
    expect(queue.take()).toEqual([]);
  });

  it('wakes once for keys that fall due together, and re-arms for the later ones', () => {
    const { clock, queue, wakes } = setup();
    queue.addAfter('a', 10);
    queue.addAfter('b', 10);
    queue.addAfter('c', 40);

    clock.advance(10);
    expect(wakes()).toBe(1);
    expect(queue.take()).toEqual(['a', 'b']);
    clock.advance(30);
    expect(wakes()).toBe(2);
    expect(queue.take()).toEqual(['c']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('backs a failing key off exponentially up to the cap, and forget() starts over', () => {
    const { clock, queue } = setup();
    const delays = Array.from({ length: 6 }, () => {
      const delay = queue.addRateLimited('a');
      clock.advance(delay);
      expect(queue.take()).toEqual(['a']);
      return delay;
    });
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);

    queue.forget('a');
    expect(queue.addRateLimited('a')).toBe(100);
  });

  it('tells how much of a back-off is left, keyed apart', () => {
    const { clock, queue } = setup();
    queue.addRateLimited('a');
    queue.addRateLimited('a');
    clock.advance(150);

    expect(queue.backoffRemainingMs('a')).toBe(50);
    expect(queue.backoffRemainingMs('b')).toBe(0);
    clock.advance(50);
    expect(queue.backoffRemainingMs('a')).toBe(0);
  });

  it('clear() drops ready and waiting keys and their timer, but remembers back-offs', () => {
    const { clock, queue, wakes } = setup();
    queue.add('a');
    queue.addAfter('b', 10);
    queue.addRateLimited('c');

    queue.clear();
    clock.advance(1_000);

    expect(queue.take()).toEqual([]);
    expect(wakes()).toBe(1);
    expect(clock.pendingTimers).toBe(0);
    expect(queue.addRateLimited('c')).toBe(200);
  });
});

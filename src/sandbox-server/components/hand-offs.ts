import type { Logger } from '../../logger.js';
import type { DatabaseHandle } from '../db/client.js';
import { START_TASK_CHANNEL, WARM_POOLS_CHANNEL } from '../replicas/hand-off.js';
import type { Component } from './component.js';

export interface HandOffsOptions {
  database: DatabaseHandle;
  /** Whether this replica holds the control-plane lease: only then is handed-off work its to do. */
  leading: () => boolean;
  startTasks: { enqueue(taskId: string): void; start(): Promise<void> };
  warmPools: { refill(): void };
  log: Logger;
}

/** Takes the start tasks and warm-pool top-ups other replicas hand to the control-plane lease's holder over NOTIFY. */
export function handOffsComponent({ database, leading, startTasks, warmPools, log }: HandOffsOptions): Component {
  const unlisten: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const each of unlisten.splice(0)) await each();
  };
  return {
    name: 'hand-offs',
    async start() {
      try {
        // A notification without payload follows a reconnection of the listener: look at every task.
        unlisten.push(
          await database.listen(START_TASK_CHANNEL, (taskId) => {
            if (!leading()) return;
            if (taskId) startTasks.enqueue(taskId);
            else startTasks.start().catch((err: unknown) => log.error({ err }, 'app conversation start tasks failed to resume'));
          }),
        );
        unlisten.push(
          await database.listen(WARM_POOLS_CHANNEL, () => {
            if (leading()) warmPools.refill();
          }),
        );
      } catch (error) {
        await stop();
        throw error;
      }
    },
    stop,
  };
}

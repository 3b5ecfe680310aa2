import type { Logger } from '../../logger.js';

/** A part of the running server: started once, stopped once, in the reverse of the order it was started. */
export interface Component<T = void> {
  name: string;
  /** Starts it, returning what later components use; a start that fails leaves nothing of it running. */
  start(): Promise<T>;
  stop(): Promise<void>;
}

/**
 * The components started so far, in order. Stopping stops them in reverse, each once, whether the
 * server is closing or a later component failed to start; a stop that fails is logged and the others
 * still stop.
 */
export class StartedComponents {
  private readonly started: Component<unknown>[] = [];

  constructor(private readonly log: Logger) {}

  async start<T>(component: Component<T>): Promise<T> {
    const value = await component.start();
    this.started.push(component);
    return value;
  }

  /** Stops every started component, last first; rejects with the first failure once all were tried. */
  async stop(): Promise<void> {
    const failures: unknown[] = [];
    for (let component = this.started.pop(); component; component = this.started.pop()) {
      try {
        await component.stop();
      } catch (error) {
        this.log.error({ err: error, component: component.name }, 'component failed to stop');
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  }

  /** Runs `startAll`; if it throws, stops what it started and rethrows its error. */
  async startOrRollBack<T>(startAll: () => Promise<T>): Promise<T> {
    try {
      return await startAll();
    } catch (error) {
      await this.stop().catch(() => undefined);
      throw error;
    }
  }
}

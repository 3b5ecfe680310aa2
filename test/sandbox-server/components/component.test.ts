import { describe, expect, it } from 'vitest';
import { logger } from '../../../src/logger.js';
import { type Component, StartedComponents } from '../../../src/sandbox-server/components/component.js';

/** Components that write what happens to them into `seen`; `failing` names the ones whose start or stop throws. */
function recorder(failing: { start?: string; stop?: string } = {}) {
  const seen: string[] = [];
  const component = (name: string): Component<string> => ({
    name,
    async start() {
      seen.push(`start ${name}`);
      if (failing.start === name) throw new Error(`${name} cannot start`);
      return `${name} value`;
    },
    async stop() {
      seen.push(`stop ${name}`);
      if (failing.stop === name) throw new Error(`${name} cannot stop`);
    },
  });
  return { seen, component };
}

describe('StartedComponents', () => {
  it('starts in order, hands each value on, and stops in reverse, each once', async () => {
    const { seen, component } = recorder();
    const components = new StartedComponents(logger);
    const values = await components.startOrRollBack(async () => [
      await components.start(component('database')),
      await components.start(component('engines')),
      await components.start(component('http')),
    ]);
    expect(values).toEqual(['database value', 'engines value', 'http value']);
    await components.stop();
    await components.stop();
    expect(seen).toEqual(['start database', 'start engines', 'start http', 'stop http', 'stop engines', 'stop database']);
  });

  it('stops the ones started, in reverse, when one fails to start, and rethrows its error', async () => {
    const { seen, component } = recorder({ start: 'http' });
    const components = new StartedComponents(logger);
    const started = components.startOrRollBack(async () => {
      await components.start(component('database'));
      await components.start(component('engines'));
      await components.start(component('http'));
      await components.start(component('never'));
    });
    await expect(started).rejects.toThrow('http cannot start');
    expect(seen).toEqual(['start database', 'start engines', 'start http', 'stop engines', 'stop database']);
  });

  it('stops the others when one fails to stop, and rejects with that failure', async () => {
    const { seen, component } = recorder({ stop: 'engines' });
    const components = new StartedComponents(logger);
    await components.start(component('database'));
    await components.start(component('engines'));
    await components.start(component('http'));
    await expect(components.stop()).rejects.toThrow('engines cannot stop');
    expect(seen.filter((line) => line.startsWith('stop'))).toEqual(['stop http', 'stop engines', 'stop database']);
  });
});

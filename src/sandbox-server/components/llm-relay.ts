import { isIPv4 } from 'node:net';
import type { Metrics } from '../../http/metrics/index.js';
import type { Logger } from '../../logger.js';
import { llmRelayPort, type SandboxServerConfig } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import { createRelayMetrics } from '../llm-relay/relay-metrics.js';
import { RelayRoutes } from '../llm-relay/relay-routes.js';
import { type LlmRelayListener, listenLlmRelay } from '../llm-relay/relay-server.js';
import { closeLlmRelayPort, LLM_RELAY_HOSTNAME, openLlmRelayPort } from '../runtime/llm-relay-access.js';
import { type Ipv4Block, parseCidr } from '../runtime/sandbox-network.js';
import type { Component } from './component.js';

export interface LlmRelayComponentOptions {
  config: SandboxServerConfig;
  database: DatabaseHandle;
  metrics: Metrics;
  /**
   * Whether sandboxes are containers on this host's engines (reaching the relay at their
   * host-gateway address, through a firewall rule), or, with a runtime passed in by tests,
   * agent-servers on this host's loopback.
   */
  containers: boolean;
  log: Logger;
}

/**
 * The LLM relay (llm-relay/): listens on every address at LLM_RELAY_PORT, so that each engine's
 * host-gateway address answers, but serves connections from loopback and SANDBOX_NETWORK_POOL
 * only. Returns its address as the sandboxes reach it, which their agents' base_url starts with.
 */
export function llmRelayComponent(options: LlmRelayComponentOptions): Component<{ origin: string }> {
  const { config, database, log } = options;
  const pool = parseCidr(config.SANDBOX_NETWORK_POOL);
  let listener: LlmRelayListener | undefined;
  let ruleOpened = false;
  return {
    name: 'llm relay',
    async start() {
      listener = await listenLlmRelay(
        {
          routes: new RelayRoutes(database.db, { log }),
          serverKey: config.LLM_API_KEY ?? null,
          acceptsFrom: (address) => isLoopback(address) || (pool !== undefined && inBlock(address, pool)),
          metrics: createRelayMetrics(options.metrics.registry),
          log: log.child({ component: 'llm-relay' }),
        },
        '0.0.0.0',
        llmRelayPort(config),
      );
      if (!options.containers) return { origin: `http://127.0.0.1:${listener.port}` };
      const problem = await openLlmRelayPort(listener.port);
      if (problem) log.warn({ port: listener.port, problem }, 'sandboxes cannot reach the LLM relay: their agents cannot call an LLM');
      ruleOpened = problem === null;
      return { origin: `http://${LLM_RELAY_HOSTNAME}:${listener.port}` };
    },
    async stop() {
      if (!listener) return;
      await listener.close();
      if (ruleOpened) await closeLlmRelayPort(listener.port);
    },
  };
}

function isLoopback(address: string): boolean {
  return address === '::1' || /^(::ffff:)?127\./.test(address);
}

function inBlock(address: string, block: Ipv4Block): boolean {
  const v4 = address.replace(/^::ffff:/, '');
  if (!isIPv4(v4)) return false;
  const parsed = parseCidr(`${v4}/${block.prefix}`);
  return parsed !== undefined && parsed.base === block.base;
}

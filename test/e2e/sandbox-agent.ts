import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { BashOutputSchema, type BashOutput } from '../../src/contracts/agent-server/bash.js';
import { buildAgentServerImage } from '../../src/sandbox-server/image/index.js';
import { SandboxInfoSchema, type SandboxInfo } from '../../src/sandbox-server/models/sandbox.js';
import { ensureBuilt } from '../helpers/build.js';
import type { E2eControlPlane } from './harness.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const checkoutTag = createHash('sha256').update(import.meta.dirname).digest('hex').slice(0, 8);

/** Where the scripted LLM stand-in listens on a sandbox's loopback: the agent reaches it there. */
export const SANDBOX_LLM_PORT = 18080;
export const SANDBOX_LLM_BASE_URL = `http://127.0.0.1:${SANDBOX_LLM_PORT}/v1`;

/**
 * Builds an agent-server image FROM `base` for one suite (`label`), tagged per checkout so two
 * checkouts testing on one engine never run each other's build, and returns its tag.
 */
export async function buildSuiteImage(label: string, base: string): Promise<string> {
  const tag = `sandbox-server/agent-server:e2e-${label}-${base.replace(/[^a-z0-9]+/g, '-')}-${checkoutTag}`;
  await ensureBuilt();
  await buildAgentServerImage({ baseImage: base, tag });
  return tag;
}

/** A shell command that waits (10 s at most) until something answers HTTP on the sandbox's `port`. */
export function waitForLoopbackPort(port: number): string {
  return `for i in $(seq 100); do node -e "fetch('http://127.0.0.1:${port}/').then(() => process.exit(0), () => process.exit(1))" && exit 0; sleep 0.1; done; exit 1`;
}

/** The agent-server of one sandbox, reached through the control plane's agent proxy. */
export interface SandboxAgent {
  sandbox: SandboxInfo;
  /** The control plane's path to `path` on this sandbox's agent-server. */
  path(path: string): string;
  bash(command: string, timeoutSeconds?: number): Promise<BashOutput>;
  upload(path: string, content: string): Promise<void>;
  /**
   * Starts the scripted LLM stand-in (fixtures/scripted-llm-server.mjs) on the sandbox's loopback
   * at SANDBOX_LLM_PORT, answering `script` in order; with `keepRequests`, each completion request's
   * body is kept as /tmp/llm/requests/<n>.json.
   */
  startScriptedLlm(script: readonly unknown[], options?: { keepRequests?: boolean }): Promise<void>;
}

/** Creates a sandbox of the default spec through the control plane and waits until it runs. */
export async function startRunningSandbox(cp: E2eControlPlane): Promise<SandboxAgent> {
  const created = (await cp.request('POST', '/api/v1/sandboxes', undefined, SandboxInfoSchema)).body;
  return sandboxAgent(cp, await cp.sandboxUntil(created.id, 'RUNNING'));
}

export function sandboxAgent(cp: E2eControlPlane, sandbox: SandboxInfo): SandboxAgent {
  const path = (inner: string) => `/api/v1/sandboxes/${sandbox.id}/agent${inner}`;
  const bash = async (command: string, timeoutSeconds = 30) =>
    (await cp.request('POST', path('/api/bash/execute_bash_command'), { command, timeout: timeoutSeconds }, BashOutputSchema)).body;
  const upload = async (target: string, content: string) => {
    const form = new FormData();
    form.append('file', new Blob([content]), 'file');
    const response = await fetch(`${cp.url}${path(`/api/file/upload?path=${encodeURIComponent(target)}`)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cp.apiKey}` },
      body: form,
    });
    expect(response.status).toBe(200);
  };
  return {
    sandbox,
    path,
    bash,
    upload,
    async startScriptedLlm(script, options = {}) {
      await upload('/tmp/llm/server.mjs', await readFile(join(FIXTURES, 'scripted-llm-server.mjs'), 'utf8'));
      await upload('/tmp/llm/script.json', JSON.stringify(script));
      const requests = options.keepRequests ? ' /tmp/llm/requests' : '';
      const launched = await bash(
        `mkdir -p /tmp/llm/requests && setsid node /tmp/llm/server.mjs ${SANDBOX_LLM_PORT} /tmp/llm/script.json${requests} > /tmp/llm/log 2>&1 < /dev/null & ` +
          `(${waitForLoopbackPort(SANDBOX_LLM_PORT)})`,
      );
      expect(launched.exit_code).toBe(0);
    },
  };
}

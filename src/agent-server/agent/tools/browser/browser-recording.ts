/**
 * Recording a browser session: a Playwright trace (every action, DOM snapshots before and after it,
 * screenshots, network), kept across navigations and tabs, saved as one zip in the workspace when
 * the recording stops. `npx playwright show-trace <file>` (or trace.playwright.dev) replays it.
 *
 * Playwright writes the trace as this server's user; the file then reaches the workspace through
 * the agent's file access, so a link the agent planted there cannot send it anywhere else.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AgentFs } from '../../../agent-fs/index.js';
import { BrowserActionError, type BrowserResult } from './browser-actions.js';
import type { BrowserSession } from './browser-session.js';

/** Where recordings go, under the workspace (OpenHands' folder for browser output). */
export const RECORDING_DIR = path.join('.agent_tmp', 'browser_observations');

export interface BrowserRecorder {
  start(): Promise<BrowserResult>;
  stop(): Promise<BrowserResult>;
}

export function createBrowserRecorder(session: BrowserSession, workspaceDir: string, files: AgentFs): BrowserRecorder {
  let recording: { file: string } | null = null;

  return {
    async start() {
      if (recording !== null) throw new BrowserActionError(`A recording is already running; it will be saved to ${recording.file}.`);
      const context = await session.context();
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const file = path.join(workspaceDir, RECORDING_DIR, `recording-${stamp}`, 'trace.zip');
      await context.tracing.start({ screenshots: true, snapshots: true, sources: false });
      recording = { file };
      return { text: `Recording started. browser_stop_recording saves it to ${file} (a Playwright trace: view it with \`npx playwright show-trace ${file}\`).` };
    },
    async stop() {
      if (recording === null) throw new BrowserActionError('No recording is running; start one with browser_start_recording.');
      const { file } = recording;
      recording = null;
      if (!session.isRunning()) throw new BrowserActionError('The browser closed while recording; nothing was saved.');
      const context = await session.context();
      const scratch = await mkdtemp(path.join(os.tmpdir(), 'browser-trace-'));
      try {
        const scratchFile = path.join(scratch, 'trace.zip');
        await context.tracing.stop({ path: scratchFile });
        const bytes = await readFile(scratchFile);
        await files.writeFile(file, bytes, { makeParents: true });
        return { text: `Recording stopped and saved to ${file} (${bytes.length} bytes). View it with \`npx playwright show-trace ${file}\`.` };
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    },
  };
}

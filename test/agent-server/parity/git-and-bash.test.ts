/** /api/git changes and diff, and the /api/bash event routes and stream, through the published client. */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startListeningAgentServer, type ListeningAgentServer } from '../../helpers/agent-server.js';
import { provideRequireForOpenHandsClient } from '../../helpers/listening-agent-server.js';

provideRequireForOpenHandsClient();
const { BashWebSocketClient, RemoteWorkspace } = await import('@openhands/typescript-client');
const { BashClient } = await import('@openhands/typescript-client/clients');

let agent: ListeningAgentServer;

beforeAll(async () => {
  agent = await startListeningAgentServer();
});
afterAll(async () => {
  await agent.close();
});

async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('git', () => {
  it('lists changes since HEAD (untracked included) and diffs a file, or since another ref', async () => {
    const repo = join(agent.workspaceDir, 'repo');
    await mkdir(repo, { recursive: true });
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: repo });
    git('init', '-q');
    await writeFile(join(repo, 'tracked.txt'), 'line1\n');
    await writeFile(join(repo, 'gone.txt'), 'bye\n');
    git('add', '.');
    git('commit', '-qm', 'first');
    await writeFile(join(repo, 'tracked.txt'), 'line1\nline2\n');
    execFileSync('rm', [join(repo, 'gone.txt')]);
    await writeFile(join(repo, 'new.txt'), 'hello\n');

    const workspace = new RemoteWorkspace({ host: agent.url, apiKey: agent.key, workingDir: agent.workspaceDir });
    try {
      expect(await workspace.gitChanges(repo)).toEqual([
        { path: 'gone.txt', status: 'DELETED' },
        { path: 'new.txt', status: 'ADDED' },
        { path: 'tracked.txt', status: 'UPDATED' },
      ]);
      expect(await workspace.gitDiff(join(repo, 'tracked.txt'))).toEqual({ original: 'line1\n', modified: 'line1\nline2\n' });
      expect(await workspace.gitDiff('repo/new.txt')).toEqual({ original: null, modified: 'hello\n' });
      expect(await workspace.gitChanges(agent.root)).toEqual([]);
      expect(await workspace.gitDiff(join(agent.root, 'nowhere.txt'))).toEqual({ original: null, modified: null });
      expect(await workspace.gitChanges(repo, { ref: '4b825dc642cb6eb9a060e54bf8d69288fbee4904' })).toEqual([
        { path: 'new.txt', status: 'ADDED' },
        { path: 'tracked.txt', status: 'ADDED' },
      ]);
    } finally {
      workspace.close();
    }
    const bad = await fetch(`${agent.url}/api/git/changes?path=repo&ref=--output=/tmp/x`, { headers: { 'x-session-api-key': agent.key } });
    expect(bad.status).toBe(422);
  });
});

describe('bash events', () => {
  it('starts a command, finds its events by command id, gets them one by one and in a batch, clears them', async () => {
    const bash = new BashClient({ host: agent.url, apiKey: agent.key });
    try {
      await bash.clearEvents();
      const command = await bash.startCommand('printf started', undefined, 5);
      expect(command).toMatchObject({ kind: 'BashCommand', command: 'printf started', cwd: agent.workspaceDir, timeout: 5 });
      const output = await waitFor(async () => {
        const page = await bash.searchEvents({ command_id__eq: command.id, kind__eq: 'BashOutput' });
        return page.items[0];
      }, 'the output');
      expect(output).toMatchObject({ kind: 'BashOutput', command_id: command.id, exit_code: 0, stdout: 'started', order: 0 });
      expect(await bash.getEvent(command.id)).toEqual(command);
      expect(await bash.getEvents([command.id, output.id, 'nope'])).toEqual([command, output, null]);
      const batch = await fetch(`${agent.url}/api/bash/bash_events/?event_ids=${output.id}&event_ids=nope`, { headers: { 'x-session-api-key': agent.key } });
      expect(await batch.json()).toEqual([output, null]);

      const executed = await bash.executeCommand('printf waited');
      expect(executed).toMatchObject({ stdout: 'waited', exit_code: 0 });
      const all = await bash.searchEvents({ sort_order: 'TIMESTAMP_DESC', limit: 1 });
      expect(all.items).toEqual([executed]);
      expect(all.next_page_id).toEqual(expect.any(String));
      expect((await bash.searchEvents({ page_id: all.next_page_id!, sort_order: 'TIMESTAMP_DESC', limit: 1 })).items[0]!.kind).toBe('BashCommand');
      expect(await bash.clearEvents()).toEqual({ cleared_count: 4 });
      expect((await bash.searchEvents()).items).toEqual([]);
    } finally {
      bash.close();
    }
    const missing = await fetch(`${agent.url}/api/bash/bash_events/nope`, { headers: { 'x-session-api-key': agent.key } });
    expect({ status: missing.status, body: await missing.json() }).toEqual({ status: 404, body: { detail: 'Not Found' } });
  });

  it('streams bash events to the published client, and replays them with resend_mode=all', async () => {
    const received: Array<{ kind?: string; stdout?: string | null }> = [];
    const stream = new BashWebSocketClient({ host: agent.url, apiKey: agent.key, callback: (event) => received.push(event) });
    const bash = new BashClient({ host: agent.url, apiKey: agent.key });
    try {
      stream.start();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await bash.startCommand('printf streamed', undefined, 5);
      await waitFor(() => received.find((event) => event.kind === 'BashOutput' && event.stdout === 'streamed'), 'the streamed output');

      const replayed: Record<string, unknown>[] = [];
      const socket = new WebSocket(`${agent.wsUrl}/sockets/bash-events?resend_mode=all&session_api_key=${agent.key}`);
      socket.on('message', (data) => replayed.push(JSON.parse(data.toString())));
      await waitFor(() => (replayed.some((event) => event.stdout === 'streamed') ? true : undefined), 'the replay');

      socket.send(JSON.stringify({ command: 'printf from-socket' }));
      socket.send('not json');
      await waitFor(() => replayed.find((event) => event.stdout === 'from-socket'), 'a command started over the socket');
      expect(replayed.find((event) => event.kind === 'BashError')).toMatchObject({ code: 'JSONDecodeError' });
      expect(socket.readyState).toBe(WebSocket.OPEN);
      socket.close();
    } finally {
      stream.stop();
      bash.close();
    }
  });
});

import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { DatabaseHandle } from '../../src/sandbox-server/db/client.js';
import { RuntimeError } from '../../src/sandbox-server/runtime/runtime.js';
import { AppConversationSchema } from '../../src/sandbox-server/models/app-conversation.js';
import { EngineInfoSchema } from '../../src/sandbox-server/models/engine.js';
import { SandboxInfoSchema } from '../../src/sandbox-server/models/sandbox.js';
import { SandboxSpecInfoSchema } from '../../src/sandbox-server/models/sandbox-spec.js';
import { SettingsSchema } from '../../src/sandbox-server/models/settings.js';
import { SnapshotInfoSchema } from '../../src/sandbox-server/models/snapshot.js';
import { checked } from '../helpers/answer.js';
import { openTestDatabase } from '../helpers/database.js';
import { makeTempDir, removeDir } from '../helpers/temp-dir.js';
import { API_KEY, type Harness, openHarness } from '../sandbox-server/app-conversations/harness.js';
import { type ScriptedLlm, startScriptedLlm, text } from '../helpers/scripted-llm.js';
import { ensureBuilt, type RunResult, runSandboxctl, runSandboxctlInTerminal, spawnSandboxctl } from './binary.js';

/** The real sandboxctl binary against a real control plane (fake containers, real agent-server). */
describe('sandboxctl against a sandbox-server', () => {
  let handle: DatabaseHandle;
  let h: Harness;
  let llm: ScriptedLlm;
  let localDir: string;

  beforeAll(async () => {
    await ensureBuilt();
    handle = await openTestDatabase('pglite');
    // Every run the agents start ends at the LLM's first answer.
    llm = await startScriptedLlm([], { responder: () => text('Done.') });
    h = await openHarness(handle, { llmBaseUrl: llm.baseUrl });
    localDir = await makeTempDir('sandboxctl-test-');
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await llm?.close();
    await handle?.close();
    await removeDir(localDir);
  });

  const ctl = (...args: string[]): Promise<RunResult> =>
    runSandboxctl(args, { env: { SANDBOX_SERVER_URL: h.url, SANDBOX_SERVER_API_KEY: API_KEY } });

  /** Runs and expects exit 0, answering the parsed --json output. */
  async function ctlJson(...args: string[]): Promise<unknown> {
    // Global options may come first; after the command a `--` would make --json part of it.
    const result = await ctl('--json', ...args);
    expect(result.stderr.includes('sandboxctl:') ? result.stderr : '').toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout);
  }

  /** ctlJson, its output checked against `schema` (the model of what the command prints). */
  async function ctlAs<S extends z.ZodType>(schema: S, ...args: string[]): Promise<z.output<S>> {
    return checked(schema, await ctlJson(...args), `sandboxctl ${args.join(' ')} --json`);
  }

  /** `sandboxes wait` running in the background: its stderr so far, and its exit code. */
  function startWaiting(id: string, state: string) {
    const child = spawnSandboxctl(['sandboxes', 'wait', id, '--for', state], { env: { SANDBOX_SERVER_URL: h.url, SANDBOX_SERVER_API_KEY: API_KEY } });
    let stderr = '';
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
    return { stderr: () => stderr, exit };
  }

  async function runningSandbox(): Promise<string> {
    return (await ctlAs(SandboxInfoSchema, 'sandboxes', 'start', '--wait')).id;
  }

  describe('specs', () => {
    it('lists specs as an aligned table, and as JSON', async () => {
      const table = await ctl('specs', 'ls');
      expect(table.code).toBe(0);
      const [header, row, ...rest] = table.stdout.trimEnd().split('\n');
      expect(header).toMatch(/^ID +IMAGE +DEFAULT +WARM +WORKING DIR +CREATED$/);
      expect(row).toMatch(/^sandbox-server\/agent-server:test +sandbox-server\/agent-server:test +yes +- +\/workspace +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      expect(header!.indexOf('IMAGE')).toBe(row!.indexOf('sandbox-server', 1));
      expect(rest).toEqual([]);
      expect(await ctlJson('specs', 'ls')).toEqual([expect.objectContaining({ id: 'sandbox-server/agent-server:test', is_default: true })]);
    });

    it('creates, shows and deletes a spec, and names what is wrong when it cannot', async () => {
      const created = await ctlJson('specs', 'create', '--id', 'cli-spec', '--image', 'busybox:1', '--env', 'A=1=2', '--memory-mb', '64', '--warm-pool', '1', '--', 'node', 'app.js');
      expect(created).toMatchObject({ id: 'cli-spec', image: 'busybox:1', initial_env: { A: '1=2' }, memory_mb: 64, command: ['node', 'app.js'], warm_pool_size: 1 });
      // Its warm pool fills in the background; ls shows ready members over the pool's size.
      const spec = async () => (await h.request('GET', '/api/v1/sandbox-specs?id=cli-spec', undefined, z.array(SandboxSpecInfoSchema.nullable()))).body[0];
      await vi.waitFor(async () => expect((await spec())?.warm_pool_ready).toBe(1), {
        timeout: 20_000,
        interval: 100,
      });
      expect((await ctl('specs', 'ls')).stdout).toMatch(/^cli-spec +busybox:1 +1\/1 +\/workspace /m);

      const shown = await ctl('specs', 'show', 'cli-spec');
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/^id +cli-spec$/m);
      expect(shown.stdout).toMatch(/^command +node app\.js$/m);
      expect(shown.stdout).toMatch(/^env A +1=2$/m);
      expect(shown.stdout).toMatch(/^warm pool +1\/1$/m);

      expect(await ctl('specs', 'create', '--id', 'cli-spec', '--image', 'busybox:1')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'sandboxctl: Sandbox spec cli-spec already exists (HTTP 409)\n',
      });
      expect(await ctl('specs', 'create', '--image', 'busybox:1', '--working-dir', 'relative')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'sandboxctl: invalid request: working_dir: must be an absolute path\n',
      });
      expect(await ctl('specs', 'rm', 'cli-spec')).toEqual({ code: 0, stdout: 'Deleted sandbox spec cli-spec\n', stderr: '' });
      const gone = 'sandboxctl: no sandbox spec "cli-spec": list them with "sandboxctl specs ls"\n';
      expect(await ctl('specs', 'rm', 'cli-spec')).toEqual({ code: 1, stdout: '', stderr: gone });
      expect(await ctl('specs', 'show', 'cli-spec')).toEqual({ code: 1, stdout: '', stderr: gone });
    });
  });

  describe('policy', () => {
    it("creates an allowlist spec, shows a sandbox's policy and replaces it, and names what is wrong when it cannot", async () => {
      const spec = await ctlJson('specs', 'create', '--id', 'cli-allowlist', '--image', 'busybox:1', '--network', 'allowlist', '--allow', 'github.com', '--allow', '*.PyPI.org');
      expect(spec).toMatchObject({ network: 'allowlist', egress: { allow: ['github.com', '*.pypi.org'], deny: [] } });
      const { id } = await ctlAs(SandboxInfoSchema, 'sandboxes', 'start', '--spec', 'cli-allowlist');
      const shown = await ctl('policy', 'show', id);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/^network +allowlist$/m);
      expect(shown.stdout).toMatch(/^allow +github\.com, \*\.pypi\.org$/m);
      expect(shown.stdout).toMatch(/^from +its spec$/m);
      expect(await ctlJson('policy', 'set', id, '--allow', 'api.github.com:443', '--allow', '10.1.0.0/16', '--deny', '10.1.2.0/24')).toEqual({
        sandbox_id: id,
        network: 'allowlist',
        egress: { allow: ['api.github.com:443', '10.1.0.0/16'], deny: ['10.1.2.0/24'] },
        inherited: false,
      });
      expect(await ctlJson('policy', 'set', id, '--inherit')).toMatchObject({ egress: { allow: ['github.com', '*.pypi.org'] }, inherited: true });
      const bad = await ctl('policy', 'set', id, '--allow', 'http://github.com');
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('egress.allow.0');
      expect(await ctl('policy', 'show', 'nope')).toMatchObject({ code: 1, stderr: expect.stringContaining('no sandbox "nope"') });
      expect((await ctl('specs', 'create', '--image', 'busybox:1', '--network', 'offline')).stderr).toContain('--network must be internet, none or allowlist');
    });
  });

  describe('sandboxes', () => {
    it('starts a sandbox and waits for it with plain progress lines when stderr is no terminal', async () => {
      const { code, stdout, stderr } = await ctl('sandboxes', 'start', '--wait');
      expect(code).toBe(0);
      const id = /^id +(\S+)$/m.exec(stdout)?.[1];
      expect(stdout).toMatch(/^status +RUNNING$/m);
      expect(stdout).toMatch(/^url AGENT_SERVER +http:\/\/127\.0\.0\.1:\d+$/m);
      expect(stderr).toMatch(new RegExp(`^sandbox ${id} is RUNNING \\(\\d+s\\)\\n$`, 'm'));
      expect(stderr).not.toContain('\r');
    });

    it('shows progress on a terminal as one line rewritten in place, with the elapsed time', async () => {
      const { code, output } = await runSandboxctlInTerminal(['sandboxes', 'start', '--wait'], {
        env: { SANDBOX_SERVER_URL: h.url, SANDBOX_SERVER_API_KEY: API_KEY },
      });
      expect(code).toBe(0);
      expect(output).toMatch(/^\r\x1b\[2Ksandbox (\S+): STARTING \(\d+s\)/);
      expect(output).toMatch(/\r\x1b\[2Ksandbox \S+ is RUNNING \(\d+s\)\r\nid +\S+\r\n/);
    });

    it('lists, shows, pauses, resumes and deletes sandboxes', async () => {
      const id = await runningSandbox();
      const table = await ctl('sandboxes', 'ls');
      expect(table.stdout.split('\n')[0]).toMatch(/^ID +STATUS +SPEC +AGENT URL +CREATED +DETAIL$/);
      expect(table.stdout).toMatch(new RegExp(`^${id} +RUNNING +sandbox-server/agent-server:test +http://127\\.0\\.0\\.1:\\d+ +\\d{4}-`, 'm'));
      expect((await ctlAs(z.array(SandboxInfoSchema), 'sandboxes', 'ls', '--status', 'RUNNING')).map((s) => s.id)).toContain(id);
      expect(await ctlJson('sandboxes', 'ls', '--limit', '1')).toHaveLength(1);
      expect(await ctlJson('sandboxes', 'show', id)).toMatchObject({ id, status: 'RUNNING', session_api_key: expect.any(String) });

      expect(await ctl('sandboxes', 'pause', id)).toEqual({ code: 0, stdout: `Pausing sandbox ${id}\n`, stderr: '' });
      await vi.waitFor(async () => expect((await ctlAs(SandboxInfoSchema, 'sandboxes', 'show', id)).status).toBe('PAUSED'), { timeout: 10_000 });
      expect(await ctlJson('sandboxes', 'resume', id, '--wait')).toMatchObject({ id, status: 'RUNNING' });
      expect(await ctlJson('sandboxes', 'rm', id)).toEqual({ success: true });
      expect(await ctl('sandboxes', 'show', id)).toEqual({
        code: 1,
        stdout: '',
        stderr: `sandboxctl: no sandbox "${id}": list them with "sandboxctl sandboxes ls"\n`,
      });
      expect((await ctl('sandboxes', 'pause', 'no-such-sandbox')).stderr).toBe(
        'sandboxctl: no sandbox "no-such-sandbox": list them with "sandboxctl sandboxes ls"\n',
      );
    });

    it('waits on the event stream for RUNNING, PAUSED and deleted, and lists what happened', async () => {
      const held = h.fake.holdCreates();
      const id = (await ctlAs(SandboxInfoSchema, 'sandboxes', 'start')).id;
      const untilRunning = startWaiting(id, 'RUNNING');
      // Released only once the waiter follows the stream: RUNNING then reaches it as an event.
      await vi.waitFor(() => expect(untilRunning.stderr()).toContain('waiting for RUNNING'), { timeout: 10_000 });
      held();
      expect(await untilRunning.exit).toBe(0);
      expect(untilRunning.stderr()).toMatch(new RegExp(`^sandbox ${id} is RUNNING \\(\\d+s\\)\\n$`, 'm'));
      // Already there: answers at once.
      expect((await ctl('sandboxes', 'wait', id, '--for', 'RUNNING')).code).toBe(0);

      const follower = spawnSandboxctl(['events', '--follow', '--json', '--sandbox', id], {
        env: { SANDBOX_SERVER_URL: h.url, SANDBOX_SERVER_API_KEY: API_KEY },
      });
      let followed = '';
      follower.stdout.on('data', (chunk: string) => {
        followed += chunk;
      });
      const followedTypes = () => followed.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line).type as string);
      try {
        await vi.waitFor(() => expect(followedTypes()).toEqual(['sandbox.created', 'sandbox.running']), { timeout: 10_000 });
        const untilPaused = startWaiting(id, 'PAUSED');
        await vi.waitFor(() => expect(untilPaused.stderr()).toContain('waiting for PAUSED'), { timeout: 10_000 });
        await ctl('sandboxes', 'pause', id);
        expect(await untilPaused.exit).toBe(0);

        const untilDeleted = startWaiting(id, 'deleted');
        await vi.waitFor(() => expect(untilDeleted.stderr()).toContain('waiting for deleted'), { timeout: 10_000 });
        await ctl('sandboxes', 'rm', id);
        expect(await untilDeleted.exit).toBe(0);
        await vi.waitFor(() => expect(followedTypes()).toEqual(['sandbox.created', 'sandbox.running', 'sandbox.paused', 'sandbox.deleted']), {
          timeout: 10_000,
        });
      } finally {
        follower.kill('SIGTERM');
      }

      const listed = await ctl('events', '--sandbox', id, '--type', 'sandbox.paused', '--type', 'sandbox.deleted');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  sandbox\\.paused +${id}  RUNNING -> PAUSED\\n.*sandbox\\.deleted +${id}  PAUSED -> DELETED  deleted\\n$`));
      expect((await ctl('sandboxes', 'wait', id, '--for', 'deleted')).code).toBe(0);
      expect((await ctl('sandboxes', 'wait', id, '--for', 'RUNNING')).code).toBe(1);
    });

    it('fails sandboxes wait when the sandbox errs, the id is unknown, or --for is wrong', async () => {
      h.fake.failNext('create', new RuntimeError('image not found: nope:1', true));
      const id = (await ctlAs(SandboxInfoSchema, 'sandboxes', 'start')).id;
      const failed = await ctl('sandboxes', 'wait', id, '--for', 'RUNNING');
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/sandboxctl: sandbox \S+ (became|is) ERROR/);
      expect((await ctl('sandboxes', 'wait', 'no-such-sandbox', '--for', 'deleted')).stderr).toBe(
        'sandboxctl: no sandbox "no-such-sandbox": list them with "sandboxctl sandboxes ls"\n',
      );
      expect((await ctl('sandboxes', 'wait', id, '--for', 'running')).code).toBe(2);
      expect((await ctl('events', '--type', 'sandbox.exploded')).code).toBe(2);
    });

    it('fails start --wait with exit 1 when the sandbox ends in ERROR, saying why, or does not come up in time', async () => {
      h.fake.failNext('create', new RuntimeError('image not found: nope:1', true));
      const failed = await ctl('sandboxes', 'start', '--wait');
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(
        /sandboxctl: sandbox \S+ is ERROR: [^\n]*image not found: nope:1; its history: "sandboxctl events --sandbox \S+"; remove it with "sandboxctl sandboxes rm \S+"\n$/,
      );
      const id = /sandbox (\S+) is ERROR/.exec(failed.stderr)?.[1] as string;
      expect((await ctl('sandboxes', 'show', id)).stdout).toMatch(/^detail +[^\n]*image not found: nope:1$/m);
      const listed = (await ctl('sandboxes', 'ls', '--status', 'ERROR')).stdout.split('\n');
      expect(listed[0]).toMatch(/ DETAIL$/);
      expect(listed.find((line) => line.startsWith(id))).toMatch(/image not found: nope:1$/);

      const release = h.fake.holdCreates();
      try {
        const slow = await ctl('sandboxes', 'start', '--wait', '--timeout', '1');
        expect(slow.code).toBe(1);
        expect(slow.stderr).toMatch(/sandboxctl: sandbox \S+ is still STARTING after \ds: wait longer with --timeout, or check the sandbox-server log\n$/);
      } finally {
        release();
      }
    });

    it('says which setting to fix when the API key is missing or wrong', async () => {
      const url = h.url;
      expect(await runSandboxctl(['sandboxes', 'ls', '--url', url])).toEqual({
        code: 1,
        stdout: '',
        stderr: `sandboxctl: sandbox-server at ${url} needs an API key: set --api-key or SANDBOX_SERVER_API_KEY\n`,
      });
      expect(await runSandboxctl(['sandboxes', 'ls', '--url', url, '--api-key', 'wrong-key-0123456789'])).toEqual({
        code: 1,
        stdout: '',
        stderr: `sandboxctl: sandbox-server at ${url} rejected the API key: check --api-key or SANDBOX_SERVER_API_KEY\n`,
      });
    });
  });

  describe('snapshots', () => {
    it('snapshots, lists, forks, starts from and deletes snapshots, and names what is wrong when it cannot', async () => {
      const id = await runningSandbox();
      const taken = await ctl('snapshot', id, '--name', 'cli-snap');
      expect(taken.code).toBe(0);
      const snapshotId = /^id +(\S+)$/m.exec(taken.stdout)?.[1];
      expect(taken.stdout).toMatch(/^name +cli-snap$/m);
      expect(taken.stdout).toMatch(new RegExp(`^sandbox +${id}$`, 'm'));
      expect(taken.stdout).toMatch(/^size +\d+ B$/m);

      const table = await ctl('snapshots', 'ls', '--sandbox', id);
      expect(table.stdout.split('\n')[0]).toMatch(/^ID +NAME +SANDBOX +SIZE +CREATED$/);
      expect(table.stdout).toMatch(new RegExp(`^${snapshotId} +cli-snap +${id} +\\d+ B +\\d{4}-`, 'm'));

      const fromSnapshot = await ctlAs(SandboxInfoSchema, 'sandboxes', 'start', '--snapshot', snapshotId!, '--wait');
      expect(fromSnapshot).toMatchObject({ status: 'RUNNING' });
      expect(fromSnapshot.id).not.toBe(id);
      const forked = await ctlAs(SandboxInfoSchema, 'fork', id, '--name', 'cli-fork', '--wait');
      expect(forked).toMatchObject({ status: 'RUNNING' });
      expect((await ctlAs(z.array(SnapshotInfoSchema), 'snapshots', 'ls', '--sandbox', id)).map((s) => s.name)).toEqual(['cli-fork', 'cli-snap']);

      const refused = await ctl('snapshots', 'rm', snapshotId!);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/delete them first/);
      await ctlJson('sandboxes', 'rm', fromSnapshot.id);
      await vi.waitFor(async () => expect(await ctl('snapshots', 'rm', snapshotId!)).toEqual({ code: 0, stdout: `Deleted snapshot ${snapshotId}\n`, stderr: '' }), {
        timeout: 10_000,
      });
      expect(await ctl('snapshots', 'rm', snapshotId!)).toEqual({
        code: 1,
        stdout: '',
        stderr: `sandboxctl: no snapshot "${snapshotId}": list them with "sandboxctl snapshots ls"\n`,
      });
      expect((await ctl('snapshot', 'no-such-sandbox')).stderr).toBe('sandboxctl: no sandbox "no-such-sandbox": list them with "sandboxctl sandboxes ls"\n');
      await ctlJson('sandboxes', 'rm', forked.id);
      await ctlJson('sandboxes', 'rm', id);
    }, 120_000);
  });

  describe('exec and cp', () => {
    let sandboxId: string;
    beforeAll(async () => {
      sandboxId = await runningSandbox();
    });

    it("prints the command's output on the right streams and exits with its exit code", async () => {
      expect(await ctl('exec', sandboxId, '--', 'echo out; echo err >&2; exit 3')).toEqual({ code: 3, stdout: 'out\n', stderr: 'err\n' });
      expect(await ctl('exec', sandboxId, '--', 'printf', '%s-%s', 'a', 'b')).toEqual({ code: 0, stdout: 'a-b', stderr: '' });
      expect(await ctl('exec', sandboxId, '--cwd', '/tmp', '--', 'pwd')).toEqual({ code: 0, stdout: '/tmp\n', stderr: '' });
      expect(await ctlJson('exec', sandboxId, '--', 'echo hi')).toMatchObject({ kind: 'BashOutput', exit_code: 0, stdout: 'hi\n' });
    });

    it('passes several words as the exact argv: quotes, spaces, dollars and empty words arrive unchanged', async () => {
      expect(await ctl('exec', sandboxId, '--', 'sh', '-c', 'echo "a  b"; exit 7')).toEqual({ code: 7, stdout: 'a  b\n', stderr: '' });
      const words = ["it's", '$HOME', '', 'a  b', '"q"', '\\', '*', '`id`', 'ünï'];
      const { code, stdout } = await ctl('exec', sandboxId, '--', 'printf', '[%s]\\n', ...words);
      expect(code).toBe(0);
      expect(stdout).toBe(words.map((word) => `[${word}]\n`).join(''));
    });

    it('exits 124 when the command is killed at its timeout', async () => {
      const { code, stderr } = await ctl('exec', sandboxId, '--timeout', '1', '--', 'sleep 30');
      expect(code).toBe(124);
      expect(stderr).toContain('timed out after 1 seconds');
    });

    it('names the sandbox when it does not exist', async () => {
      expect(await ctl('exec', 'no-such-sandbox', '--', 'true')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'sandboxctl: no sandbox "no-such-sandbox": list them with "sandboxctl sandboxes ls"\n',
      });
    });

    it('copies a file into a sandbox and back out', async () => {
      const remoteDir = `/tmp/sandboxctl-cp-${randomUUID()}`;
      const local = join(localDir, 'notes.txt');
      const content = 'line one\nline two ✓\n';
      const bytes = Buffer.byteLength(content);
      await writeFile(local, content);
      const upload = await ctl('cp', local, `${sandboxId}:${remoteDir}/`);
      expect(upload).toEqual({ code: 0, stdout: `Copied ${bytes} bytes to ${sandboxId}:${remoteDir}/notes.txt\n`, stderr: '' });
      expect((await ctl('exec', sandboxId, '--', `cat ${remoteDir}/notes.txt`)).stdout).toBe(content);

      const back = join(localDir, 'back');
      expect(await ctlJson('cp', `${sandboxId}:${remoteDir}/notes.txt`, back)).toEqual({
        source: `${sandboxId}:${remoteDir}/notes.txt`,
        destination: back,
        bytes,
      });
      expect(await readFile(back, 'utf8')).toBe(content);
      const intoDir = await ctl('cp', `${sandboxId}:${remoteDir}/notes.txt`, `${localDir}/`);
      expect(intoDir.stdout).toBe(`Copied ${bytes} bytes to ${join(localDir, 'notes.txt')}\n`);

      expect(await ctl('cp', `${sandboxId}:${remoteDir}/missing.txt`, back)).toEqual({
        code: 1,
        stdout: '',
        stderr: `sandboxctl: no file ${remoteDir}/missing.txt in sandbox ${sandboxId}\n`,
      });
      expect((await ctl('cp', join(localDir, 'missing.txt'), `${sandboxId}:/tmp/x`)).stderr).toBe(
        `sandboxctl: no such file: ${join(localDir, 'missing.txt')}\n`,
      );
      await ctl('exec', sandboxId, '--', `rm -rf ${remoteDir}`);
    });
  });

  describe('conversations', () => {
    let conversationId: string;
    beforeAll(async () => {
      const sandboxId = await runningSandbox();
      const conversation = await ctlAs(AppConversationSchema, 'conv', 'start', 'Hello from sandboxctl', '--sandbox', sandboxId, '--title', 'CLI test', '--wait');
      conversationId = conversation.id;
      expect(conversation).toMatchObject({ title: 'CLI test', sandbox_id: sandboxId, sandbox_status: 'RUNNING' });
    });

    it('starts a conversation without waiting, answering its start task', async () => {
      const { code, stdout } = await ctl('conv', 'start', 'Another one');
      expect(code).toBe(0);
      expect(stdout).toMatch(/^start task +\S+$/m);
      expect(stdout).toMatch(/^status +(WORKING|WAITING_FOR_SANDBOX|STARTING_CONVERSATION|READY)$/m);
    });

    it('lists conversations', async () => {
      const table = await ctl('conv', 'ls');
      expect(table.stdout.split('\n')[0]).toMatch(/^ID +TITLE +SANDBOX +SANDBOX STATUS +EXECUTION +CREATED$/);
      expect(table.stdout).toMatch(new RegExp(`^${conversationId} +CLI test +\\S+ +RUNNING `, 'm'));
      expect((await ctlAs(z.array(AppConversationSchema), 'conv', 'ls')).map((c) => c.id)).toContain(conversationId);
    });

    it('prints events one line each, filters by kind, and prints NDJSON with --json', async () => {
      const lines = await ctl('conv', 'events', conversationId);
      expect(lines.code).toBe(0);
      expect(lines.stdout).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  user +MessageEvent +Hello from sandboxctl$/m);

      const json = await ctl('conv', 'events', conversationId, '--kind', 'MessageEvent', '--json');
      const events = json.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
      expect(events.map((event) => [event.kind, event.source, event.llm_message.content[0].text])).toEqual([
        ['MessageEvent', 'user', 'Hello from sandboxctl'],
        ['MessageEvent', 'agent', 'Done.'],
      ]);

      expect(await ctl('conv', 'events', randomUUID())).toMatchObject({ code: 1, stderr: expect.stringMatching(/^sandboxctl: no conversation "/) });
    });

    it('follows new events live with --follow --keep-following, past the end of a run', async () => {
      const child = spawnSandboxctl(['conv', 'events', conversationId, '--follow', '--keep-following', '--json', '--kind', 'MessageEvent'], {
        env: { SANDBOX_SERVER_URL: h.url, SANDBOX_SERVER_API_KEY: API_KEY },
      });
      let stdout = '';
      child.stdout.on('data', (chunk: string) => {
        stdout += chunk;
      });
      const texts = () =>
        stdout
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line).llm_message.content[0].text as string);
      try {
        await vi.waitFor(() => expect(texts()).toEqual(['Hello from sandboxctl', 'Done.']), { timeout: 10_000 });
        for (const text of ['live one', 'live two']) {
          const sent = await h.request('POST', `/api/v1/app-conversations/${conversationId}/events`, {
            role: 'user',
            content: [{ type: 'text', text }],
          });
          expect(sent.status).toBe(200);
        }
        await vi.waitFor(() => expect(texts()).toEqual(['Hello from sandboxctl', 'Done.', 'live one', 'live two']), { timeout: 10_000 });
      } finally {
        child.kill('SIGTERM');
      }
    });
  });

  describe('conversations ending', () => {
    /** A conversation whose agent has not run yet: its first message is not run. */
    async function idleConversation(sandboxId: string): Promise<string> {
      const ready = await h.request(
        'POST',
        '/api/v1/app-conversations?wait=true',
        { sandbox_id: sandboxId, initial_message: { role: 'user', content: [{ type: 'text', text: 'Wait for it' }], run: false } },
        AppConversationSchema,
      );
      expect(ready.body.execution_status).toBe('idle');
      return ready.body.id;
    }

    /** `conv events --follow` in the background: its stdout so far, and its exit. */
    function follow(...args: string[]) {
      const child = spawnSandboxctl(['conv', 'events', ...args], { env: { SANDBOX_SERVER_URL: h.url, SANDBOX_SERVER_API_KEY: API_KEY } });
      let stdout = '';
      child.stdout.on('data', (chunk: string) => {
        stdout += chunk;
      });
      const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
      return { stdout: () => stdout, exit, kill: () => child.kill('SIGTERM') };
    }

    it('ends --follow when the agent finishes, and at once when it already has', async () => {
      const sandboxId = await runningSandbox();
      const id = await idleConversation(sandboxId);
      const following = follow(id, '--follow', '--json');
      try {
        await vi.waitFor(() => expect(following.stdout()).toContain('Wait for it'), { timeout: 10_000 });
        const sent = await h.request('POST', `/api/v1/app-conversations/${id}/events`, { role: 'user', content: [{ type: 'text', text: 'Go' }], run: true });
        expect(sent.status).toBe(200);
        expect(await following.exit).toBe(0);
      } finally {
        following.kill();
      }
      const printed = following.stdout().trimEnd().split('\n').map((line) => JSON.parse(line));
      expect(printed.at(-1)).toMatchObject({ kind: 'ConversationStateUpdateEvent', key: 'execution_status', value: 'finished' });
      expect(printed.filter((e) => e.kind === 'MessageEvent').map((e) => e.llm_message.content[0].text)).toEqual(['Wait for it', 'Go', 'Done.']);

      const again = await ctl('conv', 'events', id, '--follow', '--kind', 'MessageEvent');
      expect(again.code).toBe(0);
      expect(again.stdout.trimEnd().split('\n')).toHaveLength(3);
    });

    it('fails a start in an unknown sandbox at once, without --wait', async () => {
      expect(await ctl('conv', 'start', 'Hello', '--sandbox', 'no-such-sandbox')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'sandboxctl: no sandbox "no-such-sandbox": list them with "sandboxctl sandboxes ls"\n',
      });
    });
  });

  describe('engines', () => {
    it('lists, adds, cordons, drains, uncordons and removes engines, and names what is wrong when it cannot', async () => {
      const table = await ctl('engines', 'ls');
      expect(table.code).toBe(0);
      const [header, local] = table.stdout.trimEnd().split('\n');
      expect(header).toMatch(/^NAME +STATE +HEALTH +SANDBOXES +ADVERTISE HOST +DRAIN +DOCKER URL$/);
      expect(local).toMatch(/^local +ACTIVE +\S+ +\d+ +127\.0\.0\.1 +- +unix:\/\//);

      const added = await ctlAs(EngineInfoSchema, 'engines', 'add', 'cli-e9', 'unix:///var/run/docker-e9.sock', '--advertise-host', '127.0.0.9', '--max-sandboxes', '5', '--label', 'zone=a');
      expect(added).toMatchObject({ name: 'cli-e9', advertise_host: '127.0.0.9', max_sandboxes: 5, labels: { zone: 'a' }, state: 'ACTIVE', sandboxes: 0 });
      expect((await ctlAs(EngineInfoSchema, 'engines', 'cordon', 'cli-e9')).state).toBe('CORDONED');
      const draining = await ctl('engines', 'drain', 'cli-e9');
      expect(draining.code).toBe(0);
      expect(draining.stdout).toMatch(/^state +DRAINING$/m);
      expect(draining.stdout).toMatch(/^drain +moved 0, remaining 0$/m);
      expect(draining.stdout).toMatch(/^label zone +a$/m);
      expect((await ctl('engines', 'ls')).stdout).toMatch(/^cli-e9 +DRAINING +- +0\/5 +127\.0\.0\.9 +moved 0, remaining 0 +unix:\/\/\/var\/run\/docker-e9\.sock$/m);
      expect(await ctl('engines', 'cordon', 'cli-e9')).toEqual({ code: 1, stdout: '', stderr: 'sandboxctl: Engine cli-e9 is DRAINING (HTTP 409)\n' });
      expect((await ctlAs(EngineInfoSchema, 'engines', 'uncordon', 'cli-e9')).state).toBe('ACTIVE');
      expect(await ctl('engines', 'rm', 'cli-e9')).toEqual({ code: 0, stdout: 'Removed engine cli-e9\n', stderr: '' });

      const gone = 'sandboxctl: no engine "cli-e9": list them with "sandboxctl engines ls"\n';
      expect(await ctl('engines', 'drain', 'cli-e9')).toEqual({ code: 1, stdout: '', stderr: gone });
      expect(await ctl('engines', 'rm', 'cli-e9')).toEqual({ code: 1, stdout: '', stderr: gone });
      const usage = await ctl('engines', 'add', 'cli-e9', 'unix:///var/run/docker-e9.sock');
      expect(usage).toMatchObject({ code: 2, stderr: expect.stringContaining('--advertise-host is required') });
      const invalid = await ctl('engines', 'add', 'Bad_Name', 'unix:///x', '--advertise-host', 'h');
      expect(invalid).toMatchObject({ code: 1, stderr: expect.stringMatching(/^sandboxctl: invalid request: name: /) });
    });
  });

  describe('settings', () => {
    it("shows and changes the installation's shared settings, and names what is wrong when it cannot", async () => {
      const shown = await ctl('settings', 'show');
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/^warm_pool_size +0$/m);
      expect(shown.stdout).toMatch(/^default_memory_mb +2048$/m);
      expect(shown.stdout).toMatch(/^default_runtime +runc$/m);
      try {
        const changed = await ctlAs(SettingsSchema, 'settings', 'set', 'default_memory_mb=1024', 'default_cpus=0.5', 'default_runtime=runsc');
        expect(changed).toMatchObject({ warm_pool_size: 0, default_memory_mb: 1024, default_cpus: 0.5, default_pids_limit: 512, default_runtime: 'runsc' });
        expect((await ctlAs(SettingsSchema, 'settings', 'show')).default_memory_mb).toBe(1024);

        expect(await ctl('settings', 'set', 'warm_pool_size=two')).toMatchObject({ code: 2, stderr: expect.stringContaining('warm_pool_size must be a whole number, not "two"') });
        expect(await ctl('settings', 'set', 'max_running=3')).toMatchObject({ code: 2, stderr: expect.stringContaining('"max_running=3" is not FIELD=VALUE') });
        const refused = await ctl('settings', 'set', 'warm_pool_size=-1');
        expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/^sandboxctl: invalid request: warm_pool_size: /) });
      } finally {
        await ctlJson('settings', 'set', 'default_memory_mb=2048', 'default_cpus=1', 'default_runtime=runc');
      }
    });
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTerminalTool, type TerminalAction, type TerminalObservation, type Tool } from '../../../src/agent-server/agent/tools/index.js';
import { makeTempDir, removeDir } from '../../helpers/temp-dir.js';

/** The terminal's side of secrets: values set at start and exported before the next command when they change. */
describe('secrets in the shell', () => {
  let workspace: string;
  let tool: Tool<TerminalAction, TerminalObservation> | undefined;
  beforeEach(async () => {
    workspace = await makeTempDir('shell-secrets-');
  });
  afterEach(async () => {
    await tool?.close();
    await removeDir(workspace);
  });

  async function run(command: string): Promise<string> {
    const parsed = tool!.parseArguments({ command });
    if (!parsed.ok) throw new Error(parsed.error);
    const observation = await tool!.execute(parsed.action);
    return observation.content.map((item) => ('text' in item ? item.text : '')).join('');
  }

  it('exports a changed value, however long or many-lined, without it showing in the output', async () => {
    let secrets: Record<string, string> = { PEM: 'short' };
    tool = createTerminalTool({ workspaceDir: workspace, secrets: { environment: async () => secrets } });
    expect(await run('echo "${#PEM}"')).toContain('5');
    const key = `-----BEGIN KEY-----\n${"a'b\"c$d`e\\f".repeat(400)}\n-----END KEY-----`;
    secrets = { PEM: key, OTHER: 'x y' };
    const output = await run('printf %s "$PEM" | wc -c; echo "other=[$OTHER]"; (exit 3)');
    expect(output).toContain(String(Buffer.byteLength(key)));
    expect(output).toContain('other=[x y]');
    expect(output).not.toContain('BEGIN KEY');
    // The exit code reported is the command's own, not the exports'.
    expect(output).toContain('exit code 3');
  });
});

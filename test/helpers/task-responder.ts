/**
 * A scripted-LLM responder for tests that give the agent plain-English tasks, as OpenHands' own
 * client suites do ("Create a file at "/w/a.txt" with content "hi"."), instead of a fixed script.
 * It reads the conversation the agent-server sends and answers like a small, literal agent:
 *
 * - the last message is the user's task → one terminal tool call doing it, when a rule below
 *   recognises the task; otherwise a plain text answer (which ends the agent's turn);
 * - the last message is a tool result → a finish call quoting the result;
 * - no tools offered (ask_agent) → a plain text answer to the question.
 *
 * The rules only understand the phrasings tests use; they are not meant to be clever.
 */
import type { ChatMessage } from '../../src/agent-server/agent/llm/index.js';
import { text, toolCalls, type ReceivedRequest, type ScriptStep } from './scripted-llm.js';

/** Quotes a value for bash, single-quoted. */
function sh(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function textOfMessage(message: ChatMessage | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? []).map((part) => ('text' in part ? part.text : '')).join('\n');
}

/** Every "quoted" string of the task, in order. */
function quoted(task: string): string[] {
  return [...task.matchAll(/"([^"]*)"/g)].map((match) => match[1]!);
}

type Rule = { when: RegExp; command: (task: string, quotes: string[]) => string | undefined };

const RULES: Rule[] = [
  {
    when: /following steps/i,
    command: (_task, [path, first, second]) => path && first && second && `printf %s ${sh(first)} > ${sh(path)} && printf %s ${sh(second)} >> ${sh(path)} && cat ${sh(path)}`,
  },
  { when: /create a directory at/i, command: (_task, [dir, file, content]) => dir && file && content && `mkdir -p ${sh(dir)} && printf '%s\\n' ${sh(content)} > ${sh(file)}` },
  { when: /python file at/i, command: (_task, [path]) => path && `printf 'def add(a, b):\\n    return a + b\\n' > ${sh(path)}` },
  {
    when: /json file at/i,
    command: (_task, [path]) => path && `printf '%s\\n' ${sh(JSON.stringify({ name: 'test', version: '1.0.0', tags: ['typescript', 'testing'] }))} > ${sh(path)}`,
  },
  { when: /^append the text/i, command: (_task, [content, path]) => (content !== undefined && path ? `echo ${sh(content)} >> ${sh(path)}` : undefined) },
  { when: /add a new line/i, command: (_task, [path, line]) => path && line && `printf '\\n%s\\n' ${sh(line)} >> ${sh(path)}` },
  { when: /^delete the file at/i, command: (_task, [path]) => path && `rm -f ${sh(path)}` },
  { when: /create (?:a|another) file at/i, command: (_task, [path, content]) => (path && content !== undefined ? `echo ${sh(content)} > ${sh(path)}` : undefined) },
  { when: /how many lines/i, command: (_task, [path]) => path && `wc -l < ${sh(path)}` },
  { when: /^(?:try to )?read the file/i, command: (_task, [path]) => path && `cat ${sh(path)}` },
  { when: /^list (?:all )?(?:the )?files/i, command: () => 'ls -la' },
];

export function taskResponder(request: ReceivedRequest): ScriptStep {
  const messages = request.body.messages;
  const last = messages[messages.length - 1];
  if (!request.body.tools?.length) return text(`Answer: ${textOfMessage(last).slice(0, 200)}`);
  if (last?.role === 'tool') {
    return toolCalls([{ name: 'finish', arguments: { message: `Done. ${textOfMessage(last).slice(0, 500)}` } }]);
  }
  const task = textOfMessage(last).trim();
  for (const rule of RULES) {
    if (!rule.when.test(task)) continue;
    const command = rule.command(task, quoted(task));
    if (command) return toolCalls([{ name: 'terminal', arguments: { command } }]);
  }
  return text(`OK: ${task.slice(0, 200)}`);
}

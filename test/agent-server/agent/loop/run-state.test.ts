import { describe, expect, it } from 'vitest';
import {
  hasUserMessageSinceStatusChange,
  iterationsOfCurrentRun,
  pendingActions,
  recordedStatus,
} from '../../../../src/agent-server/agent/loop/run-state.js';
import { agentError, agentMessage, condensation, observation, rejection, status, think, userMessage } from './event-builders.js';

describe('the run state read back from the log', () => {
  it('is the last recorded execution status, idle for a new conversation', () => {
    expect(recordedStatus([])).toBe('idle');
    expect(recordedStatus([status('running'), status('waiting_for_confirmation')])).toBe('waiting_for_confirmation');
    expect(recordedStatus([status('paused'), status('not a status')])).toBe('paused');
  });

  it('finds the actions without a result, matching observations and rejections by action id', () => {
    const a = think('a', 'c1', 'r1');
    const b = think('b', 'c2', 'r1');
    const c = think('c', 'c3', 'r1');
    expect(pendingActions([a, b, c, observation('oa', a), rejection('xc', c)])).toEqual([b]);
  });

  it('lets an AgentErrorEvent answer the latest unanswered action with its tool call id, for models that reuse ids', () => {
    const first = think('first', 'call_0', 'r1');
    const second = think('second', 'call_0', 'r2');
    expect(pendingActions([first, observation('o1', first), second, agentError('e2', 'call_0')])).toEqual([]);
    expect(pendingActions([first, observation('o1', first), second])).toEqual([second]);
  });

  it('counts the LLM steps since the run last started', () => {
    const a = think('a', 'c1', 'r1');
    const b = think('b', 'c2', 'r1');
    const history = [
      status('running'),
      think('old', 'c0', 'r0'),
      status('paused'),
      status('running'),
      a,
      b,
      observation('oa', a),
      observation('ob', b),
      condensation([], 'summary', 1),
      agentMessage('m', 'done', 'r2'),
      userMessage('u', 'hi'),
    ];
    expect(iterationsOfCurrentRun(history)).toBe(3);
    expect(iterationsOfCurrentRun([])).toBe(0);
  });

  it('tells whether a user wrote since the last status change', () => {
    expect(hasUserMessageSinceStatusChange([userMessage('u1', 'hi'), status('finished')])).toBe(false);
    expect(hasUserMessageSinceStatusChange([status('finished'), agentMessage('m', 'x', 'r'), userMessage('u2', 'more')])).toBe(true);
  });
});

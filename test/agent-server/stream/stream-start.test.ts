import { describe, expect, it } from 'vitest';
import { parseStreamStart } from '../../../src/agent-server/stream/stream-start.js';

describe('parseStreamStart', () => {
  it('starts at the next append by default', () => {
    expect(parseStreamStart({})).toEqual({ from: 'now' });
  });

  it.each(['true', 'TRUE', '1', 'yes', 'on', 't', 'y'])('reads resend_all=%s as true', (value) => {
    expect(parseStreamStart({ resend_all: value })).toEqual({ from: 'beginning' });
  });

  it.each(['false', 'False', '0', 'no', 'off', 'f', 'n'])('reads resend_all=%s as false', (value) => {
    expect(parseStreamStart({ resend_all: value })).toEqual({ from: 'now' });
  });

  it('starts after the event after_event_id names, also beside resend_all=false', () => {
    expect(parseStreamStart({ after_event_id: 'ev-1' })).toEqual({ from: 'after', eventId: 'ev-1' });
    expect(parseStreamStart({ after_event_id: 'ev-1', resend_all: 'false' })).toEqual({ from: 'after', eventId: 'ev-1' });
  });

  it('reads resend_mode, which wins over resend_all, and since with or without after_timestamp', () => {
    expect(parseStreamStart({ resend_mode: 'all', resend_all: 'false' })).toEqual({ from: 'beginning' });
    expect(parseStreamStart({ resend_mode: 'since', resend_all: 'true' })).toEqual({ from: 'now' });
    expect(parseStreamStart({ resend_mode: 'since', after_timestamp: '2024-05-01T10:00:00Z' })).toEqual({
      from: 'since',
      millis: Date.parse('2024-05-01T10:00:00Z'),
    });
  });

  it.each([
    [{ resend_mode: 'sometimes' }, "resend_mode must be 'all' or 'since'"],
    [{ resend_mode: 'all', after_event_id: 'ev-1' }, 'pass resend_mode or after_event_id, not both'],
    [{ resend_mode: 'since', after_timestamp: 'yesterday' }, 'after_timestamp must be a date-time'],
    [{ resend_all: 'maybe' }, 'resend_all must be a boolean'],
    [{ resend_all: '' }, 'resend_all must be a boolean'],
    [{ resend_all: 'true', after_event_id: 'ev-1' }, 'pass resend_all or after_event_id, not both'],
    [{ after_event_id: '' }, 'after_event_id must not be empty'],
  ])('refuses %j with 4400', (query, reason) => {
    expect(parseStreamStart(query)).toEqual({ code: 4400, reason });
  });
});

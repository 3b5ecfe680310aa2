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

  it.each([
    [{ resend_all: 'maybe' }, 'resend_all must be a boolean'],
    [{ resend_all: '' }, 'resend_all must be a boolean'],
    [{ resend_all: 'true', after_event_id: 'ev-1' }, 'pass resend_all or after_event_id, not both'],
    [{ after_event_id: '' }, 'after_event_id must not be empty'],
  ])('refuses %j with 4400', (query, reason) => {
    expect(parseStreamStart(query)).toEqual({ code: 4400, reason });
  });
});

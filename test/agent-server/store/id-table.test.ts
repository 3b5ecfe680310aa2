import { describe, expect, it } from 'vitest';
import { IdTable } from '../../../src/agent-server/store/id-table.js';

describe('IdTable', () => {
  it('maps ids to positions and back through many growths', () => {
    const table = new IdTable();
    const ids = Array.from({ length: 20_000 }, (_, i) => (i % 3 === 0 ? `01HZX${i.toString(36).padStart(8, '0')}` : `ïd-✓-${i}`));
    for (const id of ids) table.push(id);
    expect(table.size).toBe(ids.length);
    ids.forEach((id, position) => {
      expect(table.positionOf(id)).toBe(position);
      expect(table.idAt(position)).toBe(id);
    });
    expect(table.positionOf('01HZX')).toBeUndefined();
    expect(table.positionOf('')).toBeUndefined();
  });
});

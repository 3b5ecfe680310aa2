import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadInstallationCa } from '../../../src/sandbox-server/installation/installation-ca.js';
import { readInstallationId } from '../../../src/sandbox-server/installation/installation-id.js';
import { openTestDatabase, testDrivers } from '../../helpers/database.js';

describe.each(testDrivers)('the installation CA (%s)', (driver) => {
  it('is made once, and replicas starting together all get the one stored', async () => {
    const database = await openTestDatabase(driver);
    try {
      const installationId = await readInstallationId(database.db);
      const loaded = await Promise.all([1, 2, 3].map(() => loadInstallationCa(database.db, installationId)));
      expect(new Set(loaded.map((ca) => ca.keyPem)).size).toBe(1);
      expect(new X509Certificate(loaded[0]!.certPem).subject).toContain(installationId);
      expect(await loadInstallationCa(database.db, installationId)).toEqual(loaded[0]);
    } finally {
      await database.close();
    }
  });
});

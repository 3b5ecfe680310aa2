import { readSharedSettingsRow } from '../../installation/shared-settings.js';
import type { SettingsInfo } from '../../models/settings.js';
import type { ServiceContext } from '../context.js';
import { toSettingsInfo } from './settings-info.js';

/** The installation's shared settings, as every replica uses them. */
export async function getSettings(ctx: ServiceContext): Promise<SettingsInfo> {
  return toSettingsInfo(await readSharedSettingsRow(ctx.db));
}

/** `kiln config get|set|list`: the profiles in $XDG_CONFIG_HOME/kiln/config.json. */
import path from 'node:path';
import { KilnError } from '../../core/errors.js';
import { configPath, getProfile, normalizeServer, profileName, readProfiles, SETTABLE, updateProfile } from '../profiles.js';

const READABLE = [...Object.keys(SETTABLE), 'keyStore'];

function checkKey(key: string, keys: string[]): void {
  if (!keys.includes(key)) throw new KilnError('USAGE_ERROR', `Unknown setting ${key}; the settings are: ${keys.join(', ')}.`);
}

export async function configGet(key: string, o: { profile?: string }): Promise<void> {
  checkKey(key, READABLE);
  const p = (await getProfile(profileName(o.profile))) as Record<string, unknown>;
  const v = p[key];
  // Nothing printed and status 1 for an unset value, like `git config`.
  if (v === undefined) {
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`${String(v)}\n`);
}

export async function configSet(key: string, value: string, o: { profile?: string }): Promise<void> {
  checkKey(key, Object.keys(SETTABLE));
  const name = profileName(o.profile);
  let v: string | undefined = value.trim() === '' ? undefined : value;
  if (v !== undefined && key === 'server') v = normalizeServer(v);
  if (v !== undefined && key === 'output') v = path.resolve(v);
  await updateProfile(name, { [key]: v });
}

export async function configList(o: { json?: boolean }): Promise<void> {
  const profiles = await readProfiles();
  const file = await configPath();
  if (o.json) {
    process.stdout.write(JSON.stringify({ file, profiles }, null, 2) + '\n');
    return;
  }
  process.stdout.write(`# ${file}\n`);
  const names = Object.keys(profiles).sort();
  if (!names.length) process.stdout.write('(no profiles yet: kiln login URL, or kiln config set server URL)\n');
  for (const n of names) {
    process.stdout.write(`[${n}]\n`);
    for (const [k, v] of Object.entries(profiles[n]!)) if (k !== 'keyId') process.stdout.write(`  ${k} = ${String(v)}\n`);
  }
}

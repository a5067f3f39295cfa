/**
 * Profiles: a named server URL and default output directory, kept in a conf file under
 * $XDG_CONFIG_HOME/kiln (config.json). The API key is not in it: it is in the OS keyring, or in
 * credentials.json (mode 0600) beside it where there is no keyring (see credentials.ts).
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Conf from 'conf';
import { KilnError } from '../core/errors.js';
import { checkPlainHttp } from './remote/plain-http.js';

export interface Profile {
  server?: string;
  output?: string;
  /** Id of the API key this machine created at login (to revoke it at logout). */
  keyId?: string;
  /** Where the key is: 'keyring' or 'file'. */
  keyStore?: 'keyring' | 'file';
  /** The server of the last logout: `kiln login` without a URL goes back to it (runs are local meanwhile). */
  lastServer?: string;
  /** SHA-256 fingerprint of the server's self-signed certificate, pinned at login (remote/transport.ts). */
  tlsFingerprint?: string;
  /** `kiln login --insecure-http` was given for this (plain http, not loopback) server. */
  insecureHttp?: boolean;
}

interface Store {
  profiles: Record<string, Profile>;
}

/** Keys a person may set with `kiln config set`. */
export const SETTABLE: Record<string, string> = {
  server: 'URL of the kiln server the tools and `kiln jobs` use',
  output: 'default output directory (like -o DIR/) for runs with this profile',
};

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.XDG_CONFIG_HOME) return path.join(path.resolve(env.XDG_CONFIG_HOME), 'kiln');
  if (process.platform === 'win32' && env.APPDATA) return path.join(env.APPDATA, 'kiln');
  return path.join(os.homedir(), '.config', 'kiln');
}

export function profileName(flag?: string): string {
  // An empty KILN_PROFILE is unset (`KILN_PROFILE=${P:-}` in a script), as an empty KILN_SERVER is.
  const name = flag ?? (process.env.KILN_PROFILE || 'default');
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
    throw new KilnError('USAGE_ERROR', `A profile name is letters, digits, "_", "." or "-" (got "${name}").`);
  return name;
}

let store: Conf<Store> | undefined;

// conf brings when-exit, which re-raises SIGINT after its own hook: only commands that write the
// configuration open it; runs read the file directly (readProfileSync).

async function open(): Promise<Conf<Store>> {
  if (!store) {
    const { default: ConfClass } = await import('conf');
    store = newConf(ConfClass, {
      cwd: configDir(),
      configName: 'config',
      defaults: { profiles: {} },
      // Keys are never in this file, but the server list is nobody else's business either.
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
      clearInvalidConfig: false,
    });
  }
  return store;
}

/** conf reads the file as it opens it: a damaged one is the user's to repair, named as runs name it. */
function newConf(ConfClass: typeof Conf, options: ConstructorParameters<typeof Conf<Store>>[0]): Conf<Store> {
  try {
    return new ConfClass<Store>(options);
  } catch (e) {
    throw unreadableConfig(path.join(configDir(), 'config.json'), e);
  }
}

/**
 * Why the configuration file cannot be used, the same for runs (readProfileSync) and `kiln config`/
 * `login`: those printed JSON.parse's bare message with exit 1.
 */
function unreadableConfig(file: string, e: unknown): KilnError {
  const why = (e as Error).message;
  return e instanceof SyntaxError
    ? new KilnError('USAGE_ERROR', `The configuration file ${file} is not valid JSON: ${why}`, { cause: e })
    : new KilnError('USAGE_ERROR', `The configuration file ${file} cannot be read: ${why}`, { cause: e });
}

export async function configPath(): Promise<string> {
  return (await open()).path;
}

export async function readProfiles(): Promise<Record<string, Profile>> {
  return { ...(await open()).get('profiles') };
}

export async function getProfile(name: string): Promise<Profile> {
  return (await readProfiles())[name] ?? {};
}

export async function updateProfile(name: string, patch: Partial<Profile>): Promise<Profile> {
  const s = await open();
  const profiles = s.get('profiles');
  const next: Profile = { ...profiles[name], ...patch };
  for (const k of Object.keys(next) as (keyof Profile)[]) if (next[k] === undefined || next[k] === '') delete next[k];
  s.set('profiles', { ...profiles, [name]: next });
  return next;
}

/** A server URL without trailing slash; only http(s). */
export function normalizeServer(url: string): string {
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`);
  } catch {
    throw new KilnError('USAGE_ERROR', `Not a server URL: ${url}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new KilnError('USAGE_ERROR', `The server URL must start with http:// or https:// (got ${url}).`);
  if (u.username || u.password)
    throw new KilnError('USAGE_ERROR', 'Put no credentials in the server URL: use `kiln login` or KILN_API_KEY.');
  return u.toString().replace(/\/+$/, '');
}

export interface ServerChoice {
  url: string;
  profile: string;
  /** The profile's default output directory, used when no -o is given. */
  output?: string;
}

/**
 * The server a command talks to: --server, else KILN_SERVER, else the profile's server. Reads the
 * config file synchronously only when there is one, so local runs stay quick.
 */
export function resolveServer(o: { server?: string; profile?: string; insecureHttp?: boolean }): ServerChoice | undefined {
  const profile = profileName(o.profile);
  const explicit = o.server ?? process.env.KILN_SERVER;
  const p = readProfileSync(profile);
  const choose = (raw: string): ServerChoice => {
    const url = normalizeServer(raw);
    // --insecure-http (program.ts sets KILN_INSECURE_HTTP for the run), or given at login for this server.
    const allowed = o.insecureHttp === true || /^(1|true|yes)$/i.test(process.env.KILN_INSECURE_HTTP ?? '');
    checkPlainHttp(url, allowed || (p.insecureHttp === true && p.server === url));
    return { url, profile, output: p.output };
  };
  if (explicit) return choose(explicit);
  if (p.server) return choose(p.server);
  // A profile named by KILN_PROFILE as by --profile: a CI job with a mistyped name ran here, exit 0.
  if (profile !== 'default')
    throw new KilnError('USAGE_ERROR', `Profile ${profile} has no server: kiln config set server URL --profile ${profile}`);
  return undefined;
}

export function readProfileSync(name: string): Profile {
  // conf would create the file and its directory on a mere read; a local run must not.
  const file = path.join(configDir(), 'config.json');
  try {
    const raw = readFileSyncSafe(file);
    if (!raw) return {};
    const data = JSON.parse(raw) as Partial<Store>;
    return data.profiles?.[name] ?? {};
  } catch (e) {
    throw unreadableConfig(file, e);
  }
}

function readFileSyncSafe(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * `kiln login [URL]`: user name and password (and the MFA code or a recovery code when the server asks) from the terminal,
 * or as lines on stdin when there is none; a session is opened only to create this machine's API key,
 * then closed. The key goes to the OS keyring (file fallback, see credentials.ts).
 * `kiln logout`: revokes that key on the server and forgets it.
 */
import os from 'node:os';
import { KilnError } from '../../core/errors.js';
import { deleteKey, loadStoredKey, saveKey } from '../credentials.js';
import { getProfile, normalizeServer, profileName, updateProfile } from '../profiles.js';
import { ask, closePrompts } from '../prompt.js';
import { RemoteClient } from '../remote/client.js';
import { loginTransport } from '../remote/transport.js';

/** The key's name says whose it is (the kiln user who logged in) and where it lives. */
export function machineKeyName(kilnUser?: string): string {
  let user = 'user';
  try {
    user = os.userInfo().username;
  } catch {
    user = process.env.USER ?? 'user';
  }
  return `kiln CLI ${kilnUser ? `${kilnUser} on ` : ''}${user}@${os.hostname()}`;
}

export async function loginCommand(
  url: string | undefined,
  o: { profile?: string; tlsFingerprint?: string; insecureHttp?: boolean },
): Promise<void> {
  const profile = profileName(o.profile);
  const existing = await getProfile(profile);
  const raw = url ?? process.env.KILN_SERVER ?? existing.server ?? existing.lastServer;
  if (!raw) throw new KilnError('USAGE_ERROR', 'Which server? kiln login https://kiln.example.com');
  const server = normalizeServer(raw);
  try {
    // Before the password is asked for: a server that fails here never sees it.
    const transport = await loginTransport(
      server,
      { ...o, pinned: existing.server === server ? existing.tlsFingerprint : undefined },
      async (q) => /^y(es)?$/i.test((await ask(q)).trim()),
    );
    const anon = new RemoteClient(server, undefined, transport.pin);
    const username = (await ask('Username: ')).trim();
    if (!username) throw new KilnError('USAGE_ERROR', 'A user name is needed.');
    const password = await ask('Password: ', { hidden: true });
    let res = await anon.json<{ token?: string; requiresMfa?: boolean; mfaToken?: string }>('POST', '/api/auth/login', {
      username,
      password,
    });
    if (res.requiresMfa && res.mfaToken) {
      // Six digits are the authenticator's code; anything else is a recovery code (XXXX-XXXX-XXXX-XXXX),
      // the way in for someone whose authenticator is lost: the server takes each in its own field.
      const answer = (await ask('MFA code (or a recovery code): ')).trim();
      const proof = /^\d{6}$/.test(answer.replace(/\s+/g, '')) ? { code: answer } : { recoveryCode: answer };
      res = await anon.json('POST', '/api/auth/mfa/complete', { mfaToken: res.mfaToken, ...proof });
    }
    if (!res.token) throw new KilnError('UNAUTHORIZED', 'The server did not open a session.');
    const session = new RemoteClient(server, res.token, transport.pin);
    const key = await session.json<{ id: string; name: string; key: string }>('POST', '/api/v1/api-keys', {
      name: machineKeyName(username),
    });
    // The session was only the way to the key.
    await session.json('POST', '/api/auth/logout').catch(() => {});
    // A new login replaces this machine's previous key for the profile: revoked where it was made (also
    // on the profile's previous server, where it would otherwise stay valid, forgotten by everyone).
    if (existing.keyId && existing.server) {
      const same = existing.server === server;
      const old = await loadStoredKey(profile, existing.server, existing.keyStore).catch(() => undefined);
      if (old)
        await new RemoteClient(existing.server, old, same ? transport.pin : existing.tlsFingerprint)
          .json('DELETE', `/api/v1/api-keys/${encodeURIComponent(existing.keyId)}`)
          .catch(() => {});
    }
    if (existing.server && existing.server !== server) await deleteKey(profile, existing.server);
    const store = await saveKey(profile, server, key.key);
    await updateProfile(profile, {
      server,
      keyId: key.id,
      keyStore: store,
      tlsFingerprint: transport.pin,
      insecureHttp: transport.insecureHttp,
    });
    process.stderr.write(
      `${transport.pin ? `Pinned the certificate ${transport.pin}.\n` : ''}Logged in to ${server} as ${username}. API key "${key.name}" stored in ${store === 'keyring' ? 'the OS keyring' : 'the credentials file'}${profile !== 'default' ? ` (profile ${profile})` : ''}.\n`,
    );
  } finally {
    closePrompts();
  }
}

export async function logoutCommand(o: { profile?: string }): Promise<void> {
  const profile = profileName(o.profile);
  const p = await getProfile(profile);
  if (!p.server) throw new KilnError('USAGE_ERROR', `Profile ${profile} has no server; nothing to log out of.`);
  // The key this login stored, revoked with itself, also when KILN_API_KEY is set (it used to be skipped
  // then, and the stored key stayed valid on the server while the message said it was revoked).
  const key = await loadStoredKey(profile, p.server, p.keyStore);
  if (key && p.keyId) {
    try {
      await new RemoteClient(p.server, key, p.tlsFingerprint).json('DELETE', `/api/v1/api-keys/${encodeURIComponent(p.keyId)}`);
    } catch (e) {
      // A key the server no longer knows is as good as revoked; anything else must be said.
      const code = (e as KilnError).code;
      if (code !== 'UNAUTHORIZED' && code !== 'NOT_FOUND') {
        process.stderr.write(
          `kiln: could not revoke the key on ${p.server}: ${(e as Error).message}\nThe key is kept; run kiln logout again when the server is reachable.\n`,
        );
        throw e;
      }
    }
  }
  await deleteKey(profile, p.server);
  // Runs are local again; `kiln login` without a URL returns to this server.
  await updateProfile(profile, { keyId: undefined, keyStore: undefined, server: undefined, lastServer: p.server });
  process.stderr.write(`Logged out of ${p.server}; the API key is revoked and forgotten. Tools run locally again.\n`);
}

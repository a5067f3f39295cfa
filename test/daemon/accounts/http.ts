/** JSON requests against a test daemon, shared by the accounts suites. */
import type { TestServer } from '../../helpers/server.js';

export interface Res {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  headers: Headers;
}

export async function call(
  s: TestServer | string,
  method: string,
  route: string,
  opts: { token?: string | null; body?: unknown; form?: FormData; headers?: Record<string, string> } = {},
): Promise<Res> {
  const base = typeof s === 'string' ? s : s.url;
  const token = opts.token === undefined ? (typeof s === 'string' ? '' : s.token) : opts.token;
  const headers: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...opts.headers };
  let body: BodyInit | undefined;
  if (opts.form) body = opts.form;
  else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(base + route, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (XML metadata, redirects): the raw text.
  }
  return { status: res.status, json, headers: res.headers };
}

export const STRONG = 'Correct-Horse-42';

/** Creates a user through the API (as the server's admin) and signs it in. */
export async function makeUser(
  s: TestServer,
  username: string,
  role: 'user' | 'admin' = 'user',
  password = STRONG,
): Promise<{ id: string; token: string; password: string }> {
  const r = await call(s, 'POST', '/api/auth/register', { body: { username, password, role } });
  if (r.status !== 201) throw new Error(`register ${username}: ${r.status} ${JSON.stringify(r.json)}`);
  const l = await call(s, 'POST', '/api/auth/login', { token: null, body: { username, password } });
  if (l.status !== 200) throw new Error(`login ${username}: ${l.status} ${JSON.stringify(l.json)}`);
  return { id: r.json.user.id, token: l.json.token, password };
}

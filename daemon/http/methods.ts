/**
 * 405 versus 404. A request fastify's router finds no route for reaches the not-found handler whether
 * the path is unknown or only the method is wrong; RFC 9110 §15.5.6 wants the second answered 405 with
 * an `Allow` header naming the methods the path takes, and OPTIONS answered with that header too
 * (§9.3.7), so a client can tell "no such thing" from "not like that". kiln sends no CORS headers
 * (browsers reach it from its own origin only: host-guard.ts), so an OPTIONS preflight from another
 * site gets the Allow list and no Access-Control-Allow-Origin, and the browser keeps refusing.
 */
import type { FastifyInstance } from 'fastify';
import { registeredRoutes } from '../openapi/route-doc.js';

interface PathPattern {
  re: RegExp;
  methods: Set<string>;
}

const patterns = new WeakMap<FastifyInstance, PathPattern[]>();

/** `/api/v1/jobs/:id/progress` → a RegExp for one concrete path (a parameter is one non-empty segment). */
function patternOf(url: string): RegExp {
  const src = url
    .split('/')
    .map((seg) => {
      if (seg === '*') return '.*';
      if (seg.startsWith(':')) return '[^/]+';
      return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${src}$`);
}

/** Built once, on the first refused request: every route is registered by then (the app is ready). */
function patternsFor(app: FastifyInstance): PathPattern[] {
  let list = patterns.get(app);
  if (list) return list;
  const byUrl = new Map<string, Set<string>>();
  for (const r of registeredRoutes(app)) {
    const set = byUrl.get(r.url) ?? new Set<string>();
    set.add(r.method);
    byUrl.set(r.url, set);
  }
  list = [...byUrl].map(([url, methods]) => ({ re: patternOf(url), methods }));
  patterns.set(app, list);
  return list;
}

/** The methods some route takes at this path (its query dropped), sorted; empty when no route has the path. */
export function allowedMethods(app: FastifyInstance, url: string): string[] {
  let p = url.split('?', 1)[0]!;
  try {
    p = decodeURI(p);
  } catch {
    // Not decodable: matched as sent (the router refused it already, as 400).
  }
  const found = new Set<string>();
  for (const { re, methods } of patternsFor(app)) if (re.test(p)) for (const m of methods) found.add(m);
  if (found.size && !found.has('OPTIONS')) found.add('OPTIONS');
  return [...found].sort();
}

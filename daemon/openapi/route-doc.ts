/**
 * A fixed route's OpenAPI operation, declared on the route as its fastify `schema` (the one source,
 * as @fastify/swagger reads route schemas): `response` is fastify's key, holding OpenAPI response
 * objects; the other keys are OpenAPI's own words, which fastify does not act on. Requests are
 * checked in the handlers (KilnError, the same messages as the CLI), not by fastify.
 */
import type { FastifyInstance, FastifySerializerCompiler } from 'fastify';

type Json = Record<string, unknown>;
type Security = { [scheme: string]: string[] }[];

export interface RouteDoc {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  /** `[]` for a public route. */
  security?: Security;
  parameters?: Json[];
  requestBody?: Json;
  /** Status → OpenAPI response object (or a $ref to a shared one). */
  response: Record<string, unknown>;
}

export interface RegisteredRoute {
  method: string;
  url: string;
  schema?: unknown;
}

const registered = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/**
 * Records every route the app registers with its schema; call before any plugin (onRoute cannot be
 * added once routes exist). Route response schemas describe what a route sends: the reply is sent as
 * the handler built it (JSON.stringify, as without a schema), never trimmed to the schema.
 */
export function trackRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  registered.set(app, routes);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url, schema: r.schema });
  });
  const asBuilt: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);
  app.setSerializerCompiler(asBuilt);
}

/**
 * Every route the app registered (fastify paths, HEAD included): the OpenAPI coverage test compares
 * them with the document. A plugin's instance inherits from the app's, so it finds the same list.
 */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  for (let o: object | null = app; o; o = Object.getPrototypeOf(o)) {
    const routes = registered.get(o as FastifyInstance);
    if (routes) return routes;
  }
  return [];
}

function isRouteDoc(schema: unknown): schema is RouteDoc {
  return !!schema && typeof schema === 'object' && typeof (schema as RouteDoc).operationId === 'string';
}

/** The paths of the routes that carry a RouteDoc, in OpenAPI form. */
export function routeDocPaths(routes: readonly RegisteredRoute[]): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const r of routes) {
    if (r.method === 'HEAD' || !isRouteDoc(r.schema)) continue;
    // Own string keys only: fastify marks the schema object it has seen with a symbol.
    const { response, ...operation } = Object.fromEntries(Object.entries(r.schema)) as unknown as RouteDoc;
    const url = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    paths[url] = { ...paths[url], [r.method.toLowerCase()]: { ...operation, responses: response } };
  }
  return paths;
}

/** OpenAPI pieces shared by the route descriptions of several route families. */

/** RFC 7240 preferences every run route honours. */
export const PREFER = {
  name: 'Prefer',
  in: 'header',
  required: false,
  schema: { type: 'string', examples: ['respond-async', 'wait=30'] },
  description:
    "`respond-async`: answer 202 at once; `wait=N`: wait at most N seconds for the result before answering 202 (instead of the server's SYNC_WAIT_MS); both (`respond-async, wait=N`, RFC 7240 §4.3): 202 only if the run takes longer than N seconds. The honoured preferences come back in Preference-Applied (respond-async only on a 202).",
};

export const ACCEPTED = {
  description: 'Queued or still running: follow the job at statusUrl (Location) or its events at eventsUrl.',
  headers: {
    Location: { schema: { type: 'string' }, description: 'The job: /api/v1/jobs/{jobId}.' },
    'Preference-Applied': { schema: { type: 'string' }, description: 'The Prefer preference honoured, if any.' },
  },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Accepted' } } },
};

type Json = Record<string, unknown>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const binary = { type: 'string', format: 'binary' };
/** A JSON response with its schema. */
export const json = (schema: Json, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
/** Spread into an operation readable without credentials. */
export const pub = { security: [] as { [scheme: string]: string[] }[] };
export const okBody = { type: 'object', required: ['ok'], properties: { ok: { const: true } } };
export const text = (mime: string, description: string) => ({ description, content: { [mime]: { schema: { type: 'string' } } } });

/** The shared error responses (components/responses/Error<status>) of these statuses. */
export function errorResponses(codes: number[]): Json {
  return Object.fromEntries(codes.map((status) => [String(status), { $ref: `#/components/responses/Error${status}` }]));
}

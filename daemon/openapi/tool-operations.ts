/**
 * The operations of the generated routes: one run route and (when batchable) one batch route per
 * catalog tool and preset, each with its own settings schema as a component.
 */
import { settingsJsonSchema } from '../../src/core/settings.js';
import type { ExtraInput } from '../../src/core/tool.js';
import { routeOf, targets, type Target } from '../jobs/targets.js';
import { ACCEPTED, binary, errorResponses, PREFER, ref } from './common.js';

type Json = Record<string, unknown>;

function pascal(id: string): string {
  return id.replace(/(^|-)([a-z0-9])/g, (_m, _d, c: string) => c.toUpperCase());
}

function camel(id: string): string {
  const p = pascal(id);
  return p[0]!.toLowerCase() + p.slice(1);
}

/** Moves a schema's `$defs` into components so its `#/$defs/...` references resolve in the document. */
function hoist(name: string, schema: Json, components: Json): Json {
  const defs = schema.$defs as Record<string, Json> | undefined;
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v as Json)
          .filter(([k]) => k !== '$defs' && k !== '$schema' && k !== '$id')
          .map(([k, x]) => [
            k,
            k === '$ref' && typeof x === 'string' && x.startsWith('#/$defs/') ? `#/components/schemas/${name}_${x.slice(8)}` : rewrite(x),
          ]),
      );
    }
    return v;
  };
  for (const [k, d] of Object.entries(defs ?? {})) components[`${name}_${k}`] = rewrite(d);
  return rewrite(schema) as Json;
}

function extraProps(extra: ExtraInput[] | undefined): { props: Json; notes: string[] } {
  const props: Json = {};
  const notes: string[] = [];
  for (const x of extra ?? []) {
    if (x.field === 'file') {
      notes.push(`A second \`file\` part is the ${x.description}${x.required ? ' (required)' : ''}.`);
      continue;
    }
    const d = `${x.description}. Accepts ${x.accept.join(', ')}.${x.required ? ' Required.' : ''}`;
    if (x.indexed) {
      for (const i of [0, 1]) props[`${x.field}${i}`] = { ...binary, description: `${d} Indexed: ${x.field}0, ${x.field}1, …` };
    } else {
      props[x.field] = { ...binary, description: d };
    }
  }
  return { props, notes };
}

function runOperation(t: Target, settingsRef: Json): Json {
  const input = t.tool.input;
  const { props, notes } = extraProps(input.extra);
  const common = {
    settings: { ...settingsRef, description: 'Tool settings as a JSON object string. Other plain text fields are merged in as settings.' },
    clientJobId: { type: 'string', maxLength: 200, description: 'Caller-chosen id to correlate progress.' },
    fileId: { type: 'string', description: 'Existing library item: the output is saved as a new version of it.' },
  };
  const multipartProps: Json =
    input.kind === 'file'
      ? { file: { ...binary, description: `The input (${input.accept.join(', ')}).` }, ...props, ...common }
      : input.kind === 'files'
        ? {
            file: {
              type: 'array',
              items: binary,
              minItems: input.min,
              maxItems: input.max,
              description: `Repeated \`file\` parts, ${input.min}-${input.max} files (${input.accept.join(', ')}).`,
            },
            ...props,
            ...common,
          }
        : { ...props, ...common };
  const required = input.kind === 'none' ? [] : ['file'];
  const content: Json = {
    'multipart/form-data': {
      schema: { type: 'object', properties: multipartProps, ...(required.length ? { required } : {}) },
      encoding: { settings: { contentType: 'application/json' } },
    },
  };
  if (input.kind === 'none') content['application/json'] = { schema: settingsRef };
  const preset = t.tool.presetOf;
  const description = [
    preset && input.kind !== 'none'
      ? `Preset: runs \`${preset.base.id}\` with ${JSON.stringify(preset.fixed)} fixed (not settable); takes ${input.accept.join(', ')} (checked from the bytes, 415 otherwise).`
      : (t.tool.description ?? t.tool.summary),
    `Output: ${t.tool.output}.`,
    ...notes,
  ].join('\n\n');
  return {
    operationId: camel(t.id),
    tags: [t.section],
    summary: preset ? `${t.id}: ${preset.base.summary}` : t.tool.summary,
    description,
    parameters: [PREFER],
    requestBody: { required: input.kind !== 'none', content },
    responses: {
      '200': { description: 'Finished inside the synchronous window.', content: { 'application/json': { schema: ref('RunResult') } } },
      '202': ACCEPTED,
      ...errorResponses([400, 401, 403, 404, 409, 413, 415, 499, 500, 501, 503, 504]),
    },
  };
}

function batchOperation(t: Target, settingsRef: Json): Json {
  return {
    operationId: camel(t.id) + 'Batch',
    tags: [t.section],
    summary: `Batch ${t.id}: one ZIP for many inputs.`,
    description:
      "Each input is checked from its bytes first (an input the tool does not take fails in the manifest without running; when no input is one the tool takes, 415 and no job), then runs as its own run. The answer starts once every run has ended: its headers carry the job id and the counts, so a failure is seen without unzipping; the ZIP holds the outputs in input order and manifest.json (every input with its output name or its error). To follow progress meanwhile, send a clientJobId and find the job with GET /api/v1/jobs?clientJobId=…. With `Prefer: respond-async` the answer is 202 at once and the archive becomes the job's output (its downloadUrl once completed); `wait=N` is not honoured on batches.",
    parameters: [PREFER],
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['files'],
            properties: {
              files: { type: 'array', items: binary, description: 'Repeated `files` parts.' },
              settings: { ...settingsRef, description: 'Settings for every input, as a JSON object string.' },
              clientJobId: { type: 'string', maxLength: 200, description: 'Caller-chosen id to find the batch job while it runs.' },
            },
          },
          encoding: { settings: { contentType: 'application/json' } },
        },
      },
    },
    responses: {
      '200': {
        description: 'A ZIP archive, streamed once every run has ended (the job is completed before its first byte).',
        headers: {
          'X-Job-Id': { description: 'The batch job id.', schema: { type: 'string' } },
          'X-Batch-Total': { description: 'Inputs in the batch.', schema: { type: 'integer' } },
          'X-Batch-Succeeded': { description: 'Inputs that gave an output.', schema: { type: 'integer' } },
          'X-Batch-Failed': { description: 'Inputs that failed (their errors are in manifest.json).', schema: { type: 'integer' } },
        },
        content: { 'application/zip': { schema: binary } },
      },
      '202': ACCEPTED,
      ...errorResponses([400, 401, 403, 404, 413, 415, 499]),
    },
  };
}

/** The paths of every tool, preset and batch route; their settings schemas are added to `components`. */
export function toolPaths(components: Json): Json {
  const paths: Json = {};
  for (const t of targets()) {
    const name = `${pascal(t.tool.id)}Settings`;
    if (!components[name]) components[name] = hoist(name, settingsJsonSchema(t.tool) as Json, components);
    const settingsRef = ref(name);
    paths[routeOf(t)] = { post: runOperation(t, settingsRef) };
    if (t.batchable) paths[routeOf(t) + '/batch'] = { post: batchOperation(t, settingsRef) };
  }
  return paths;
}

/** /llms.txt and /llms-full.txt: the API as plain text for language models, generated from the catalog. */
import { describeSettings, type SettingInfo } from '../../src/core/settings.js';
import { SECTIONS, type InputSpec } from '../../src/core/tool.js';
import { VERSION } from '../../src/core/version.js';
import { routeOf, targets } from '../jobs/targets.js';

const INTRO = `# kiln ${VERSION}

> Process images, video, audio and documents with named tools over HTTP (or the \`kiln\` CLI).

## Using the API

- Authenticate: POST /api/auth/login {"username","password"} -> {"token"}; send \`Authorization: Bearer <token>\` (or an API key \`si_…\` from POST /api/v1/api-keys).
- Run a tool: POST /api/v1/tools/<section>/<tool_id>, multipart/form-data with \`file\` and \`settings\` (a JSON object string). Tools without an input file also take the settings as a JSON body.
- 200 -> {jobId, downloadUrl, originalSize, processedSize[, data]}; GET downloadUrl for the output.
- 202 -> {jobId, async: true}; follow GET /api/v1/jobs/<jobId>/progress (server-sent events: progress, then completed or failed), then download.
- Batch: POST /api/v1/tools/<section>/<tool_id>/batch with repeated \`files\`; the answer is a ZIP with manifest.json.
- Errors: {"error": {"code", "message", "details"?, "reason"?}} with the HTTP status of the code.
- Full description: /api/v1/openapi.yaml (OpenAPI 3.1), every tool's settings: /llms-full.txt.
`;

export function llmsSummary(): string {
  const lines = [INTRO, '## Tools', ''];
  for (const section of SECTIONS) {
    const ts = targets().filter((t) => t.section === section && !t.tool.presetOf);
    if (!ts.length) continue;
    lines.push(`### ${section}`, '');
    for (const t of ts) lines.push(`- ${t.id}: ${t.tool.summary} (POST ${routeOf(t)})`);
    lines.push('');
  }
  const presets = targets().filter((t) => t.tool.presetOf);
  if (presets.length) {
    lines.push('## Presets', '', 'Each runs its base tool with the output format fixed.', '');
    for (const t of presets) lines.push(`- ${t.id} -> ${t.tool.presetOf!.base.id} (POST ${routeOf(t)})`);
    lines.push('');
  }
  return lines.join('\n');
}

function settingLine(s: SettingInfo): string {
  const parts = [s.type + (s.enum ? ` one of ${s.enum.join('|')}` : '')];
  if (s.min !== undefined) parts.push(`${s.exclusiveMin ? '>' : '>='} ${s.min}`);
  if (s.max !== undefined) parts.push(`<= ${s.max}`);
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  if (s.required) parts.push('required');
  return `  - ${s.name} (${parts.join(', ')})${s.description ? `: ${s.description}` : ''}`;
}

export function llmsFull(): string {
  const lines = [INTRO, '## Tools', ''];
  for (const t of targets()) {
    const tool = t.tool;
    const input = tool.input;
    lines.push(`### ${t.id}`, '');
    lines.push(`POST ${routeOf(t)}${t.batchable ? ` (batch: POST ${routeOf(t)}/batch)` : ''}`, '');
    const preset = tool.presetOf;
    if (preset && input.kind !== 'none') {
      lines.push(
        `Preset of ${preset.base.id} with ${JSON.stringify(preset.fixed)} fixed. Takes ${input.accept.join(', ')}; output ${preset.outputExtension}.`,
        '',
      );
    } else {
      lines.push(tool.description ?? tool.summary, '');
      lines.push(`Input: ${inputText(input)}.`);
      for (const x of input.extra ?? [])
        lines.push(
          `Extra file \`${x.indexed ? x.field + '0, ' + x.field + '1…' : x.field}\`${x.required ? ' (required)' : ''}: ${x.description}.`,
        );
      lines.push(`Output: ${tool.output}.`, '');
    }
    // A preset lists its own settings: the base tool's without the ones it fixes.
    const settings = describeSettings(tool);
    if (settings.length) lines.push('Settings:', ...settings.map(settingLine), '');
  }
  return lines.join('\n');
}

function inputText(input: InputSpec): string {
  return input.kind === 'file'
    ? `one \`file\` (${input.accept.join(', ')})`
    : input.kind === 'files'
      ? `${input.min}-${input.max} \`file\` parts (${input.accept.join(', ')})`
      : 'no file; settings as a JSON body';
}

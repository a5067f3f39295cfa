/**
 * Builds the commander subcommand of a tool from its declaration: positional inputs, one kebab-case
 * flag per setting (with type, range and default in --help), a flag per extra file, and the common
 * flags. Nothing here is written per tool.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { formatChoice } from '../core/formats.js';
import { describeSettings, coerceSettingValue, type SettingInfo } from '../core/settings.js';
import { KilnError } from '../core/errors.js';
import type { Tool } from '../core/tool.js';

export interface ToolCommandOptions {
  output?: string;
  settings?: string;
  json?: boolean;
  quiet?: boolean;
  force?: boolean;
  concurrency?: string;
  server?: string;
  profile?: string;
  local?: boolean;
  fileId?: string;
  async?: boolean;
  insecureHttp?: boolean;
  [flag: string]: unknown;
}

/** Flags every tool command has; settings may not use these names. */
export const COMMON_FLAGS = [
  'output',
  'settings',
  'json',
  'quiet',
  'force',
  'concurrency',
  'server',
  'profile',
  'local',
  'help',
  'file-id',
  'async',
  'insecure-http',
];

export function settingHelp(s: SettingInfo): string {
  const parts: string[] = [];
  if (s.description) parts.push(s.description.replace(/\.$/, ''));
  // commander lists enum choices itself.
  const kind = s.enum ? 'choice' : s.type;
  let range = '';
  if (s.min !== undefined && s.max !== undefined) range = ` ${s.exclusiveMin ? '>' : ''}${s.min}-${s.max}`;
  else if (s.min !== undefined) range = ` ${s.exclusiveMin ? '>' : '>='}${s.min}`;
  else if (s.max !== undefined) range = ` <=${s.max}`;
  parts.push(
    `[${kind}${range}${s.default !== undefined ? `, default ${JSON.stringify(s.default)}` : ''}${s.required ? ', required' : ''}]`,
  );
  return parts.join(' ');
}

function valueName(s: SettingInfo): string {
  if (s.type === 'boolean') return '[bool]';
  if (s.type === 'array') return '<list>';
  if (s.type === 'object') return '<json>';
  return s.type === 'integer' || s.type === 'number' ? '<n>' : '<value>';
}

export function buildToolCommand(tool: Tool, nameOverride?: string): Command {
  const cmd = new Command(nameOverride ?? tool.id);
  cmd.description(tool.summary);
  if (tool.input.kind === 'none') cmd.argument('[inputs...]', 'no input file: this tool is driven by its settings');
  else if (tool.input.kind === 'files') cmd.argument('<inputs...>', `${tool.input.min}-${tool.input.max} input files, used together`);
  else cmd.argument('<inputs...>', 'input files (several or a glob run as a batch; - = stdin)');

  for (const s of describeSettings(tool)) {
    if (COMMON_FLAGS.includes(s.flag)) throw new Error(`setting ${tool.id}.${s.name} collides with a common flag`);
    const opt = new Option(`--${s.flag} ${valueName(s)}`, settingHelp(s));
    if (s.enum) {
      const choices = s.enum.map(String);
      opt.choices(choices);
      // The usual other spellings of a format are accepted (`--format jpeg` where the choice is jpg).
      opt.argParser((value: string) => {
        const v = choices.includes(value) ? value : formatChoice(choices, value);
        if (v === undefined) throw new InvalidArgumentError(`Allowed choices are ${choices.join(', ')}.`);
        return v;
      });
    }
    cmd.addOption(opt);
  }
  for (const x of tool.input.extra ?? []) {
    const flag = x.flag ?? x.field;
    cmd.addOption(new Option(`--${flag} <file${x.indexed ? 's...' : ''}>`, `${x.description}${x.required ? ' (required)' : ''}`));
  }
  cmd
    .option('-o, --output <path>', 'output file, or directory ending in / (default: current directory); - = stdout')
    .option('--settings <json>', 'settings as one JSON object (flags win over it)')
    .option('--json', 'print one JSON result line per input on stdout')
    .option('-q, --quiet', 'no progress output')
    .option('-f, --force', 'allow overwriting an input file')
    .option('--concurrency <n>', 'parallel runs for a batch (default: number of cores; with --server: 4 uploads)')
    .option('--server <url>', "run on this kiln server (env KILN_SERVER; default: the profile's server, if any)")
    .option('--profile <name>', 'configuration profile for the server and its key (env KILN_PROFILE)')
    .option('--local', 'run locally even when a server is configured')
    .option('--insecure-http', 'allow plain http to a server on another machine (env KILN_INSECURE_HTTP=1)')
    .option('--async', 'with --server: print the job id once the run is queued and exit (kiln jobs watch|download ID later)');
  if (tool.input.kind !== 'none')
    cmd.option('--file-id <id>', "with --server: run on this item of the server's file library instead of an upload");
  if (tool.examples?.length) {
    cmd.addHelpText('after', `\nExamples:\n${tool.examples.map((e) => `  kiln ${nameOverride ?? tool.id} ${e}`).join('\n')}\n`);
  }
  cmd.addHelpText('after', `\nOutput: ${tool.output}\n`);
  return cmd;
}

/** Settings from --settings JSON, then flags (flags win). */
export function settingsFromOptions(tool: Tool, opts: ToolCommandOptions): Record<string, unknown> {
  let settings: Record<string, unknown> = {};
  if (opts.settings) {
    try {
      const parsed: unknown = JSON.parse(opts.settings);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      settings = parsed as Record<string, unknown>;
    } catch (e) {
      throw new KilnError('VALIDATION_ERROR', `--settings is not a JSON object: ${(e as Error).message}`);
    }
  }
  for (const s of describeSettings(tool)) {
    const key = camelFlag(s.flag);
    const v = opts[key];
    if (v === undefined) continue;
    settings[s.name] = v === true ? true : coerceSettingValue(s, String(v));
  }
  return settings;
}

/** commander's attribute name for a flag: kebab → camel. */
export function camelFlag(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

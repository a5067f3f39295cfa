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
  overwrite?: boolean;
  /** false with --no-clobber */
  clobber?: boolean;
  zip?: boolean;
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
  'overwrite',
  'no-clobber',
  'clobber',
  'zip',
  'insecure-http',
];

export function settingHelp(setting: SettingInfo): string {
  // zod's .int() says ±2^53-1 where no bound was meant: that is no bound to a reader.
  const bound = (n: number | undefined) => (n !== undefined && Math.abs(n) < Number.MAX_SAFE_INTEGER ? n : undefined);
  const s = { ...setting, min: bound(setting.min), max: bound(setting.max) };
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

/** What a boolean flag's optional value may be (coerceSettingValue's words). */
const BOOL_WORD = /^(true|1|yes|on|false|0|no|off)$/i;

/**
 * `--flag [bool]` takes the next word as its value when one follows, so `kiln ocr --enhance scan.png`
 * read scan.png as the boolean and then refused the command for its missing input. A boolean flag not
 * followed by a boolean word gets an explicit `true`, as its help promises.
 */
export function explicitBooleans(tool: Tool, argv: string[]): string[] {
  const flags = new Set(
    describeSettings(tool)
      .filter((s) => s.type === 'boolean')
      .map((s) => `--${s.flag}`),
  );
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    out.push(a);
    if (a === '--') return [...out, ...argv.slice(i + 1)];
    if (flags.has(a) && !BOOL_WORD.test(argv[i + 1] ?? '')) out.push('true');
  }
  return out;
}

export function buildToolCommand(tool: Tool, nameOverride?: string): Command {
  const cmd = new Command(nameOverride ?? tool.id);
  cmd.description(tool.summary);
  // The tool command is parsed on its own (main.ts), so commander does not know it runs under `kiln`.
  cmd.configureHelp({ commandUsage: (c) => `kiln ${c.name()} ${c.usage()}` });
  if (tool.input.kind === 'none') {
    const picture = tool.input.extra?.find((x) => x.field === 'file' && !x.required);
    cmd.argument(
      '[inputs...]',
      picture
        ? `optional: ${picture.description} (same as --${picture.flag ?? 'file'})`
        : 'no input file: this tool is driven by its settings',
    );
  } else if (tool.input.kind === 'files') cmd.argument('<inputs...>', `${tool.input.min}-${tool.input.max} input files, used together`);
  else cmd.argument('<inputs...>', 'input files (several or a glob run as a batch; - = stdin)');

  const settings = describeSettings(tool);
  for (const s of settings) {
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
    // A list setting given several times collects every value (`--keywords sea --keywords boats`);
    // commander would keep only the last one, silently dropping the rest.
    else if (s.type === 'array') opt.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    cmd.addOption(opt);
  }
  // `--no-strip-metadata` for false, as users of other CLIs write it (and as the help examples did, which
  // was "unknown option"); hidden from --help, whose boolean lines say `[bool]`. Not where a setting
  // already owns that flag.
  const flags = new Set(settings.map((s) => s.flag));
  for (const s of settings)
    if (s.type === 'boolean' && !flags.has(`no-${s.flag}`)) cmd.addOption(new Option(`--no-${s.flag}`, `${s.flag}: false`).hideHelp());
  for (const x of tool.input.extra ?? []) {
    const flag = x.flag ?? x.field;
    cmd.addOption(new Option(`--${flag} <file${x.indexed ? 's...' : ''}>`, `${x.description}${x.required ? ' (required)' : ''}`));
  }
  cmd
    .option(
      '-o, --output <path>',
      'output file, directory ending in / (created), or a %d pattern for several files; default: ./<input>-<tool>.<ext>; - = stdout',
    )
    .option('--settings <json>', 'settings as one JSON object (flags win over it)')
    .option('--json', 'print one JSON result line per input (or per error) on stdout')
    .option('-q, --quiet', 'no progress output')
    .option('--overwrite', 'replace existing outputs (the default)')
    .option('--no-clobber', 'never replace an existing file: refuse with exit 2')
    .option('--zip', 'keep the ZIP of a tool that writes several files, instead of the separate files')
    .option('-f, --force', 'allow overwriting an input file')
    .option('--concurrency <n>', 'parallel runs for a batch (default: number of cores, one more for image tools; with --server: 4 uploads)')
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
    if (Array.isArray(v))
      // Each occurrence of a list flag is a comma list, a JSON array or one JSON item: they are joined.
      settings[s.name] = v.flatMap((one) => {
        const c = coerceSettingValue(s, String(one));
        return Array.isArray(c) ? c : [c];
      });
    else settings[s.name] = v === true ? true : coerceSettingValue(s, String(v));
  }
  return settings;
}

/** commander's attribute name for a flag: kebab → camel. */
export function camelFlag(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * A settings error in the words of the command line: `--left is required` where the daemon says
 * `left is required`. Problems about the settings as a whole keep their message.
 */
export function inFlagWords(err: KilnError, tool: Tool): KilnError {
  if (err.code !== 'VALIDATION_ERROR' || !Array.isArray(err.details)) return err;
  const flags = new Map(describeSettings(tool).map((s) => [s.name, s.flag]));
  const problems = err.details as { path?: unknown; message?: unknown }[];
  // A rule about the settings as a whole ("mode every needs everyN"): camelCase names are unambiguous
  // enough to become flags; plain words (range, width) stay as written.
  // So is a tool's own refusal whose message says more than its details (html-to-image: "… points to a
  // private address …; an administrator can allow it …" with the detail "address not allowed").
  const detailed = problems.every((p) => typeof p.message === 'string' && err.message.includes(p.message));
  if ((problems.length === 1 && problems[0]!.path === 'settings') || !detailed) {
    const message = err.message.replace(/\b[a-z]+[A-Z][A-Za-z0-9]*\b/g, (w) => (flags.has(w) ? `--${flags.get(w)}` : w));
    return message === err.message
      ? err
      : new KilnError('VALIDATION_ERROR', message, { details: err.details, reason: err.reason, cause: err });
  }
  if (!problems.every((p) => typeof p.path === 'string' && typeof p.message === 'string' && flags.has(p.path.split('.')[0]!))) return err;
  const worded = problems.map((p) => {
    const [top, ...rest] = (p.path as string).split('.');
    // The sentence ends once, below ("… the PDF has 5 pages." was printed with two periods).
    const message = String(p.message)
      .replace(/^unknown setting/, 'is not a setting')
      .replace(/\.+$/, '');
    return `--${flags.get(top!)}${rest.length ? `.${rest.join('.')}` : ''} ${message}`;
  });
  return new KilnError('VALIDATION_ERROR', `${worded.join('; ')}.`, { details: err.details, reason: err.reason, cause: err });
}

/**
 * The top-level commands of kiln (everything that is not a tool). Kept apart from main.ts so the
 * completion and man-page generators read the very same definitions the CLI parses with.
 * Each action imports its module lazily: `kiln resize` never loads ssh, ink or the keyring.
 */
import { Argument, Command, Option } from 'commander';
import { VERSION } from '../core/version.js';
import { addAdminCommand } from './commands/admin-program.js';
import { addKeysCommand } from './commands/keys.js';

/** Flags shared by every command that talks to a server. */
export function addServerOptions(cmd: Command): Command {
  return cmd
    .option('--server <url>', "kiln server to use (env KILN_SERVER; default: the profile's server)")
    .option('--profile <name>', 'configuration profile (env KILN_PROFILE; default: "default")')
    .option('--insecure-http', 'allow plain http to a server on another machine (env KILN_INSECURE_HTTP=1)')
    .hook('preAction', (_cmd, action) => {
      // Read where the server is chosen (profiles.ts resolveServer), however the command reaches it.
      if (action.opts().insecureHttp) process.env.KILN_INSECURE_HTTP = '1';
    });
}

export function topProgram(): Command {
  const program = new Command('kiln');
  // Before the subcommands are added, so they inherit it: every parse error reaches main() (exit 2).
  program.exitOverride();
  // A parse error's message, then where to look (GNU's "Try 'ls --help'"), on stderr.
  program.showHelpAfterError("(kiln COMMAND --help lists a command's flags)");
  program
    .description('Process images, video, audio and documents from the command line, or serve the same tools over HTTP.')
    .version(VERSION, '-V, --version')
    .usage('<tool> <inputs...> [settings] [-o PATH]  |  kiln <command>');
  program
    .command('tools')
    .description('list every tool')
    .option('--json', 'machine-readable')
    .option('--section <section>', 'only this section')
    .action(async (o: { json?: boolean; section?: string }) => (await import('./commands/tools.js')).toolsCommand(o));
  program
    .command('presets')
    .description('list the conversion presets (each is a command: kiln jpg-to-png photo.jpg)')
    .option('--json', 'machine-readable')
    .action(async (o: { json?: boolean }) => (await import('./commands/presets.js')).presetsCommand(o));
  program
    .command('doctor')
    .description('which engines are installed, their versions, and how to install what is missing')
    .option('--json', 'machine-readable')
    .action(async (o: { json?: boolean }) => (await import('./commands/doctor.js')).doctorCommand(o));
  program
    .command('serve')
    .description('start the kiln daemon (HTTP API)')
    .option('--port <port>', 'port (env PORT)', undefined)
    .option('--host <host>', 'address to listen on (env HOST)', undefined)
    .option('--data-dir <dir>', 'data directory (env DATA_DIR)')
    .option('--allow-open-network', 'allow a non-loopback address with authentication disabled')
    .action(async (o: { port?: string; host?: string; dataDir?: string; allowOpenNetwork?: boolean }) =>
      (await import('./commands/serve.js')).serveCommand(o),
    );

  addServerOptions(
    program
      .command('mcp')
      .description('serve every tool and preset to AI agents over the Model Context Protocol (stdio)')
      .option('--tools <regex>', 'expose only the tools whose id matches')
      .option('--section <list>', 'expose only these sections (comma-separated: image,video,audio,pdf,files)')
      .option('--list', 'print the tools that would be exposed, and exit')
      .option('--json', 'with --list: one JSON line per tool')
      .option('--local', 'run locally even when a server is configured')
      .option(
        '--root <dir>',
        "a folder the calls may read and write (repeatable; default: the client's roots, else the working directory)",
        (v: string, prev: string[] = []) => [...prev, v],
      )
      .addHelpText('after', '\nRegister it with an MCP client as the command `kiln mcp` (docs/MCP.md has the JSON snippet).\n'),
  ).action(async (o: Record<string, string | string[] | boolean | undefined>) => (await import('./commands/mcp.js')).mcpCommand(o));
  program
    .command('watch')
    .description('process every file that arrives in a folder with a tool, preset or pipeline (a hot folder)')
    .argument('<in-dir>', 'the folder to watch')
    .option('--tool <id>', "the tool to run; the tool's own flags follow (e.g. --tool resize --width 800)")
    .option('--preset <id>', 'a conversion preset to run (e.g. heic-to-jpg)')
    .option('--pipeline <file|name>', 'a pipeline file, or a name in ~/.config/kiln/pipelines/')
    .option('-o, --output <dir>', 'where the outputs go (created when missing)')
    .option('--settings <json>', 'the tool settings as one JSON object')
    .option('-r, --recursive', 'also watch the folders below (outputs mirror them)')
    .option('--keep', 'leave processed originals in place (remembered in IN_DIR/.kiln-watch.json) instead of moving them to IN_DIR/.done/')
    .option('--initial', 'also process the files already there at start')
    .option('-j, --jobs <n>', 'files processed at once (default 1)')
    .option('--stable-ms <ms>', 'a file is complete once its size has not changed for this long (default 2000)')
    .option('--interval-ms <ms>', 'how often the folder is scanned (default 1000; file events make it sooner)')
    .option('--json', 'one JSON line per processed file on stdout')
    .option('-q, --quiet', 'no log lines on stderr')
    .allowUnknownOption()
    .allowExcessArguments()
    .addHelpText(
      'after',
      '\nFailed files move to IN_DIR/.failed/ with NAME.error.json beside them. Ctrl-C or SIGTERM stops: runs in flight are aborted,\ntheir originals stay in place, no output is half-written. Exit status 5 when a file failed.\n',
    )
    .action(async (dir: string, o: Record<string, string | boolean | undefined>, cmd: Command) =>
      (await import('./commands/watch.js')).watchCommand(dir, o, cmd.args.slice(1)),
    );
  program
    .command('login')
    .description('sign in to a kiln server: prompts for user name, password (and MFA code), stores an API key in the OS keyring')
    .argument('[url]', "server URL (default: the profile's server)")
    .option('--profile <name>', 'configuration profile to store the server and key in')
    .option('--tls-fingerprint <sha256>', "pin this SHA-256 fingerprint of the server's certificate (as `kiln serve` prints it)")
    .option('--insecure-http', 'allow plain http to a server on another machine (the password crosses the network readable)')
    .addHelpText(
      'after',
      '\nThe password is never a flag. Without a terminal, the answers are read as lines on stdin: user name, password, then the MFA code (or a recovery code) if the server asks.\nWhere no OS keyring exists, the key is stored in $XDG_CONFIG_HOME/kiln/credentials.json (mode 0600). For CI, skip login: set KILN_API_KEY.\nA certificate no authority of this machine vouches for (TLS_SELF_SIGNED=true) is shown by its fingerprint and pinned for the profile once you accept it (or give --tls-fingerprint); a different certificate later is refused.\n',
    )
    .action(async (url: string | undefined, o: { profile?: string; tlsFingerprint?: string; insecureHttp?: boolean }) =>
      (await import('./commands/login.js')).loginCommand(url, o),
    );
  program
    .command('logout')
    .description("revoke this machine's API key on the server and forget it")
    .option('--profile <name>', 'configuration profile')
    .action(async (o: { profile?: string }) => (await import('./commands/login.js')).logoutCommand(o));

  const config = program.command('config').description('show or change settings (profiles: server URL, default output directory)');
  config
    .command('get')
    .description('print one setting')
    .argument('<key>', 'server | output | apiKeyStore')
    .option('--profile <name>', 'configuration profile')
    .action(async (key: string, o: { profile?: string }) => (await import('./commands/config.js')).configGet(key, o));
  config
    .command('set')
    .description('change one setting (an empty value removes it)')
    .argument('<key>', 'server | output')
    .argument('<value>', 'new value')
    .option('--profile <name>', 'configuration profile')
    .action(async (key: string, value: string, o: { profile?: string }) => (await import('./commands/config.js')).configSet(key, value, o));
  config
    .command('list')
    .description('print every profile and the path of the configuration file')
    .option('--json', 'machine-readable')
    .action(async (o: { json?: boolean }) => (await import('./commands/config.js')).configList(o));

  const features = program
    .command('features')
    .description('feature bundles of the AI tools: list, install, remove, export/import for offline machines')
    .addHelpText(
      'after',
      '\nLocally they go into the data dir (KILN_DATA_DIR); with --server (or KILN_SERVER, or a logged-in profile) the server installs them (admin). --local forces the data dir.\n',
    );
  const featureOpts = (cmd: Command) =>
    addServerOptions(cmd)
      .option('--local', 'use this machine even when a server is configured')
      .option('--json', 'machine-readable')
      .option('-q, --quiet', 'no progress or messages on stderr');
  featureOpts(features.command('list', { isDefault: true }).description('every bundle with its state, size, licence and tools'))
    // The default subcommand receives whatever else was typed (`kiln features bogus`): that is a
    // subcommand it does not know, as for `kiln jobs bogus`, not "too many arguments for 'list'".
    .allowExcessArguments(true)
    .action(async (o: Record<string, string | boolean | undefined>, cmd: Command) => {
      if (cmd.args.length) features.error(`error: unknown command '${cmd.args[0]}'`, { exitCode: 2, code: 'commander.unknownCommand' });
      return (await import('./commands/features.js')).featuresList(o);
    });
  featureOpts(
    features
      .command('install')
      .description('install the bundles a tool needs (or one bundle by name); installed ones are skipped')
      .argument('<tool-or-bundle...>', 'tool ids (e.g. remove-background) or bundle ids (e.g. face-detection)')
      .option('--wait', 'with a server: follow the install until it ends'),
  ).action(async (names: string[], o: Record<string, string | boolean | undefined>) =>
    (await import('./commands/features.js')).featuresInstall(names, o),
  );
  featureOpts(features.command('remove').description('remove an installed bundle').argument('<bundle>', 'bundle id')).action(
    async (bundle: string, o: Record<string, string | boolean | undefined>) =>
      (await import('./commands/features.js')).featuresRemove(bundle, o),
  );
  features
    .command('export')
    .description('write one archive with a bundle and its runtime, for `kiln features import` on a machine without network')
    .argument('<bundle>', 'bundle id')
    .requiredOption('-o, --output <file>', 'the archive to write (.tar)')
    .option('-f, --force', 'overwrite an existing file')
    .option('--json', 'machine-readable')
    .option('-q, --quiet', 'no progress')
    .action(async (bundle: string, o: Record<string, string | boolean | undefined>) =>
      (await import('./commands/features.js')).featuresExport(bundle, o),
    );
  featureOpts(
    features
      .command('import')
      .description(
        'install a bundle archive made by `kiln features export`, verified against the pinned digests; or an OCR runtime release with --index and --archive',
      )
      .argument('[file]', 'the bundle archive')
      .option('--index <file>', 'OCR runtime: the signed release index (ocr-runtime-index.json)')
      .option('--archive <file>', 'OCR runtime: the archive the index binds'),
  ).action(async (file: string | undefined, o: Record<string, string | boolean | undefined>) =>
    (await import('./commands/features.js')).featuresImport(file, o),
  );
  features
    .command('build-ocr-runtime')
    .description('build and sign an OCR runtime release (index + archive) from the pinned npm packages, for this platform')
    .requiredOption('--key <file>', 'Ed25519 private key (PEM) to sign the index with')
    .requiredOption('-o, --output <dir>', 'directory for ocr-runtime-index.json and the archive')
    .option('--release <version>', 'release version written into the index', '2026.11.0')
    .option('--no-recipe', 'leave out the npm recipe (the archive must then be hosted at the release location)')
    .option('--json', 'machine-readable')
    .option('-q, --quiet', 'no messages')
    .action(async (o: Record<string, string | boolean | undefined>) => (await import('./commands/features.js')).featuresBuildOcrRuntime(o));

  const jobs = program.command('jobs').description('jobs on a kiln server');
  addServerOptions(
    jobs
      .command('list')
      .description('your recent jobs')
      .option('--json', 'machine-readable')
      .option('--limit <n>', 'at most this many (up to 500)')
      .option('--offset <n>', 'skip this many of the newest')
      .option('--status <status>', 'only jobs in this state: queued, running, completed, failed or cancelled'),
  ).action(async (o: Record<string, string | boolean | undefined>) => (await import('./commands/jobs.js')).jobsList(o));
  addServerOptions(
    jobs.command('get').description("one job's status and result").argument('<id>', 'job id').option('--json', 'machine-readable'),
  ).action(async (id: string, o: Record<string, string | boolean | undefined>) => (await import('./commands/jobs.js')).jobsGet(id, o));
  addServerOptions(
    jobs
      .command('watch')
      .description("follow a job's progress until it ends")
      .argument('<id>', 'job id')
      .option('--json', 'machine-readable')
      .option('-q, --quiet', 'no progress bar'),
  ).action(async (id: string, o: Record<string, string | boolean | undefined>) => (await import('./commands/jobs.js')).jobsWatch(id, o));
  addServerOptions(
    jobs.command('cancel').description('cancel a queued or running job').argument('<id>', 'job id').option('--json', 'machine-readable'),
  ).action(async (id: string, o: Record<string, string | boolean | undefined>) => (await import('./commands/jobs.js')).jobsCancel(id, o));
  addServerOptions(
    jobs
      .command('download')
      .description("download a finished job's output")
      .argument('<id>', 'job id')
      .option('-o, --output <path>', 'output file, or directory ending in / (created); default: ./<name>-<tool>.<ext>; - = stdout')
      .option('--overwrite', 'replace an existing file (the default)')
      .option('--no-clobber', 'never replace an existing file (exit 2)')
      .option('--zip', 'keep the ZIP of a tool that made several files, instead of the separate files')
      .option('-f, --force', 'same as --overwrite (kept for scripts)')
      .option('--json', 'print one JSON result line'),
  ).action(async (id: string, o: Record<string, string | boolean | undefined>) => (await import('./commands/jobs.js')).jobsDownload(id, o));

  const pipeline = program
    .command('pipeline')
    .description(
      'run pipelines (plain JSON files: {"steps": [{"tool": "resize", "settings": {...}}, ...]}) locally, or keep them on a server',
    );
  addServerOptions(pipeline.command('run'))
    .description(
      'run a pipeline file (or a name in ~/.config/kiln/pipelines/) on the inputs locally; any other NAME is a pipeline saved on the server',
    )
    .option('--local', 'never use a server: NAME must be a local pipeline file')
    .argument('<pipeline>', 'FILE.json or NAME')
    // Optional: a pipeline whose first step makes its own input (qr-generate → png-to-jpg) takes none.
    .argument('[inputs...]', 'input files (globs allowed); none when the first step takes no file (qr-generate)')
    .option('-o, --output <path>', 'output file, directory ending in / (created), or a %d pattern for several files')
    .option('--json', 'one JSON result line per input')
    .option('-q, --quiet', 'no progress bar')
    .option('--overwrite', 'replace existing outputs (the default)')
    .option('--no-clobber', 'never replace an existing file (exit 2)')
    .option('--zip', 'keep a ZIP of several outputs whole instead of writing the files')
    .option('-f, --force', 'allow overwriting an input file')
    .option('--concurrency <n>', 'inputs processed at once')
    .action(async (ref: string, inputs: string[], o: Record<string, string | boolean | undefined>) =>
      (await import('./commands/pipeline.js')).pipelineRunCommand(ref, inputs, o as never),
    );
  pipeline
    .command('validate')
    .description('check every step of a pipeline file without running it; every problem is listed')
    .argument('<pipeline>', 'FILE.json or NAME')
    .option('--json', 'one JSON line: the steps, or the error with every problem in details')
    .action(async (ref: string, o: { json?: boolean }) => (await import('./commands/pipeline.js')).pipelineValidateCommand(ref, o));
  addServerOptions(
    pipeline
      .command('save')
      .description('save a pipeline file on the server (replaces one of the same name)')
      .argument('<pipeline>', 'FILE.json or NAME')
      .option('--name <name>', 'name to save it under (default: its "name", else the file name)')
      .addOption(
        new Option('--scope <scope>', "private (default), or team: your team's members see and run it").choices(['private', 'team']),
      )
      .option('--json', 'machine-readable'),
  ).action(async (ref: string, o: Record<string, string | boolean | undefined>) =>
    (await import('./commands/pipeline.js')).pipelineSaveCommand(ref, o),
  );
  addServerOptions(
    pipeline
      .command('list')
      .description('the pipelines saved on the server: yours and those your team shares')
      .addOption(new Option('--scope <scope>', 'all (default), private, or team').choices(['all', 'private', 'team']))
      .option('--json', 'machine-readable'),
  ).action(async (o: Record<string, string | boolean | undefined>) => (await import('./commands/pipeline.js')).pipelineListCommand(o));
  addServerOptions(
    pipeline
      .command('rm')
      .description('delete a pipeline saved on the server (one you may change: not a teammate’s)')
      .argument('<name>', 'its name or id (kiln pipeline list)')
      .option('--json', 'machine-readable'),
  ).action(async (ref: string, o: Record<string, string | boolean | undefined>) =>
    (await import('./commands/pipeline.js')).pipelineRemoveCommand(ref, o),
  );

  const files = program
    .command('files')
    .description('the file library of a server, or of the local data dir (no server configured, or --local)');
  const libraryOptions = (cmd: Command) =>
    addServerOptions(cmd)
      .option('--local', 'use the local data dir even when a server is configured')
      .option('--data-dir <dir>', 'local data dir (env KILN_DATA_DIR)')
      .option('--json', 'machine-readable');
  libraryOptions(
    files
      .command('list')
      .description('library items, newest first')
      .option('--type <type>', 'image, video, audio, pdf, a content type, or an extension')
      .option('--name <text>', 'name contains')
      .addOption(
        new Option('--scope <scope>', "all (default), private, or team (shared by your team's members)").choices([
          'all',
          'private',
          'team',
        ]),
      )
      .option('--page <n>', 'page number')
      .option('--page-size <n>', 'items per page (max 200)'),
  ).action(async (o: Record<string, string | boolean | undefined>) => (await import('./commands/files.js')).filesList(o));
  libraryOptions(
    files
      .command('upload')
      .description('add files to the library (one item each)')
      .argument('<files...>', 'files to upload')
      .option('--name <name>', 'item name (one file only)')
      .addOption(
        new Option('--scope <scope>', "private (default), or team: your team's members see and use it").choices(['private', 'team']),
      ),
  ).action(async (f: string[], o: Record<string, string | boolean | undefined>) => (await import('./commands/files.js')).filesUpload(f, o));
  libraryOptions(
    files
      .command('get')
      .description('download an item (its newest version, or --ver N)')
      .argument('<id>', 'item id')
      .option('--ver <n>', "version number (--version is kiln's own)")
      .option('-o, --output <path>', "output file, or directory ending in / (created); default: the item's name; - = stdout")
      .option('--overwrite', 'replace an existing file (the default)')
      .option('--no-clobber', 'never replace an existing file (exit 2)')
      .option('-f, --force', 'same as --overwrite (kept for scripts)'),
  ).action(async (id: string, o: Record<string, string | boolean | undefined>) => (await import('./commands/files.js')).filesGet(id, o));
  libraryOptions(
    files.command('versions').description("an item's versions: who, when, which tool and settings").argument('<id>', 'item id'),
  ).action(async (id: string, o: Record<string, string | boolean | undefined>) =>
    (await import('./commands/files.js')).filesVersions(id, o),
  );
  libraryOptions(
    files
      .command('add-version')
      .description("upload a file as an item's newest version (the older ones stay)")
      .argument('<id>', 'item id')
      .argument('<file>', 'file to upload')
      .option('--name <name>', "the version's file name (default: the file's)"),
  ).action(async (id: string, file: string, o: Record<string, string | boolean | undefined>) =>
    (await import('./commands/files.js')).filesAddVersion(id, file, o),
  );
  libraryOptions(
    files
      .command('restore')
      .description('make a copy of an older version the newest (--ver N); nothing is deleted')
      .argument('<id>', 'item id')
      .option('--ver <n>', 'the version to restore'),
  ).action(async (id: string, o: Record<string, string | boolean | undefined>) =>
    (await import('./commands/files.js')).filesRestore(id, o),
  );
  libraryOptions(
    files
      .command('update')
      .description('rename an item, or share it with your team (--scope team) or make it private again')
      .argument('<id>', 'item id')
      .option('--name <name>', 'new name')
      .addOption(new Option('--scope <scope>', 'private, or team').choices(['private', 'team'])),
  ).action(async (id: string, o: Record<string, string | boolean | undefined>) => (await import('./commands/files.js')).filesUpdate(id, o));
  libraryOptions(
    files
      .command('rm')
      .description('delete items, or one version of an item (--ver N)')
      .argument('<ids...>', 'item ids')
      .option('--ver <n>', 'delete only this version number'),
  ).action(async (ids: string[], o: Record<string, string | boolean | undefined>) => (await import('./commands/files.js')).filesRm(ids, o));

  program
    .command('completion')
    .description('print the shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'bash | zsh | fish').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: 'bash' | 'zsh' | 'fish') => (await import('./gen/completion.js')).printCompletion(shell));

  program
    .command('deploy')
    .description('install or upgrade kiln on a server over SSH and start it (systemd unit, or a detached process)')
    .argument('<target>', 'ssh://user@host[:port]')
    .option('-i, --identity <file>', 'private key file (default: the ssh agent, then ~/.ssh/id_ed25519, id_rsa)')
    .addOption(new Option('--port <port>', 'port kiln listens on, on the remote').default('1349'))
    .option('--host <address>', 'address kiln listens on, on the remote', '0.0.0.0')
    .option('--dir <path>', 'install directory on the remote (default: ~/.local/lib/kiln, /opt/kiln for root)')
    .option('--data-dir <path>', 'data directory on the remote (default: ~/.local/share/kiln, /var/lib/kiln for root)')
    .option('--no-systemd', 'start a detached process even where systemd is available')
    .option('--env <NAME=VALUE...>', 'daemon setting for the service (e.g. MAX_UPLOAD_MB=512); no secrets')
    .option('--known-hosts <file>', 'known_hosts file to check the host key against (default: ~/.ssh/known_hosts)')
    .option('--insecure-accept-host-key', 'accept an unknown host key without checking it')
    .option('--tls-cert <file>', 'serve https with this certificate (PEM; uploaded into the data dir); default: a self-signed one, pinned')
    .option('--tls-key <file>', 'the private key of --tls-cert (PEM; stored 0600)')
    .option('--behind-proxy <url>', 'listen on 127.0.0.1 only, behind your TLS reverse proxy serving this https URL')
    .option('--insecure-http', 'serve plain http (trusted networks only)')
    .action(async (target: string, o: Record<string, string | boolean | undefined>) =>
      (await import('./commands/deploy.js')).deployCommand(target, o),
    );

  addAdminCommand(program);
  addKeysCommand(program);

  program.addHelpText(
    'after',
    `\nTools: run \`kiln tools\` for the list, \`kiln <tool> --help\` for its settings.\n` +
      `Remote: add --server URL (or set KILN_SERVER, or \`kiln login URL\`) to run any tool on a kiln server.\n` +
      `Interactive: run \`kiln\` with no arguments in a terminal.\n` +
      `Outputs: -o FILE (its name picks the format), -o DIR/ (created), -o page-%d.png for tools that make several files\n` +
      `  (--zip keeps their ZIP); without -o, ./<input>-<tool>.<ext>. An existing output is replaced (--overwrite, the\n` +
      `  default) unless --no-clobber; an input only with --force. \`cat a.jpg | kiln resize - --width 99 > b.jpg\` works.\n` +
      `Scripts: --json prints one JSON line per input or per error on stdout; exit codes in the README.\n`,
  );
  return program;
}

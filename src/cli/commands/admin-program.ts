/**
 * The `kiln admin` command tree. Only definitions: every action loads commands/admin.ts (and through it
 * the database code or the API client) lazily, so registering it costs nothing at start-up.
 */
import { Argument, type Command } from 'commander';

type Opts = Record<string, string | boolean | undefined>;

/** Where to act, the same choice the tool commands make: a server when one is given or configured, else the data dir. */
export function target(cmd: Command): Command {
  return cmd
    .option(
      '--server <url>',
      "kiln server to administer through its API with an admin's key (env KILN_SERVER; default: the profile's server)",
    )
    .option('--profile <name>', 'configuration profile (env KILN_PROFILE; default: "default")')
    .option('--local', 'use the local data dir even when a server is configured')
    .option('--data-dir <dir>', 'local data directory; implies --local (env DATA_DIR; DATABASE_URL selects PostgreSQL)')
    .option('--json', 'machine-readable');
}

const load = () => import('./admin.js');
const loadBackup = () => import('./admin-backup.js');

export function addAdminCommand(program: Command): void {
  const admin = program
    .command('admin')
    .description("manage users, API keys and MFA: on a server with an admin's key, or directly on the local data dir (no server needed)");

  const users = admin.command('users').description('user accounts');
  target(users.command('list').description('list users with role, team, MFA and SSO')).action(async (o: Opts) =>
    (await load()).usersList(o),
  );
  target(
    users
      .command('add')
      .alias('create')
      .description(
        'create a user; the password is asked for (or read as one line from stdin). --service: a service account for CI, with no password, signing in only with keys an admin issues',
      )
      .argument('<username>')
      .addArgument(new Argument('[role]', 'admin | user').choices(['admin', 'user']))
      .option('--team <team>', 'team id or name')
      .option('--service', 'a service account: no password, no MFA; keys from `kiln keys create --user`'),
  ).action(async (username: string, role: string | undefined, o: Opts) => (await load()).usersAdd(username, { ...o, role }));
  target(
    users
      .command('set-role')
      .description("change a user's role (the last admin stays admin)")
      .argument('<username>')
      .addArgument(new Argument('<role>', 'admin | user').choices(['admin', 'user'])),
  ).action(async (username: string, role: string, o: Opts) => (await load()).usersSetRole(username, role, o));
  target(
    users
      .command('reset-password')
      .description("set a user's password (asked for, or one line on stdin); revokes its sessions and API keys")
      .argument('<username>'),
  ).action(async (username: string, o: Opts) => (await load()).usersResetPassword(username, o));
  target(
    users
      .command('delete')
      .description('delete a user with its sessions, API keys, jobs, library files and pipelines')
      .argument('<username>')
      .option('-y, --yes', 'do not ask for confirmation'),
  ).action(async (username: string, o: Opts) => (await load()).usersDelete(username, o));

  const keys = admin.command('keys').description('API keys of all users');
  target(
    keys.command('list').description('list API keys (never the keys themselves)').option('--user <username>', "only this user's keys"),
  ).action(async (o: Opts) => (await load()).keysList(o));
  target(keys.command('revoke').description('revoke an API key by id').argument('<id>')).action(async (id: string, o: Opts) =>
    (await load()).keysRevoke(id, o),
  );

  const dataDirOption = (cmd: Command) =>
    cmd.option('--data-dir <dir>', 'the data directory (env DATA_DIR; default: the usual one)').option('--json', 'machine-readable');
  dataDirOption(
    admin
      .command('backup')
      .description(
        'write a consistent backup of the data dir (database + library) while the daemon runs; PostgreSQL: see docs/OPERATIONS.md',
      )
      .requiredOption('-o, --output <file>', 'the backup file to write (a ZIP with a manifest of digests); - streams it to stdout'),
  ).action(async (o: Opts) => (await loadBackup()).backupCommand(o));
  dataDirOption(
    admin
      .command('restore')
      .description('restore a backup into an empty data dir after checking every digest (stop the daemon first)')
      .argument('<file>', 'a file written by kiln admin backup'),
  ).action(async (file: string, o: Opts) => (await loadBackup()).restoreCommand(file, o));
  dataDirOption(
    admin
      .command('migrate')
      .description('apply pending database migrations (the daemon also does on start); --dry-run lists them')
      .option('--dry-run', 'only list the pending migrations'),
  ).action(async (o: Opts) => (await loadBackup()).migrateCommand(o));

  target(
    admin.command('mfa-reset').description("switch off a user's MFA (lost authenticator and recovery codes)").argument('<username>'),
  ).action(async (username: string, o: Opts) => (await load()).mfaReset(username, o));
}

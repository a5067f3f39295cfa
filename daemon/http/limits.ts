/**
 * Live limits: what a request may do now — upload size, library and job storage quotas, request rate —
 * from the settings record (PUT /api/v1/settings), the user's team overrides (PUT
 * /api/v1/teams/:id/limits) and the environment defaults, in that order. Read from the database and kept
 * for a moment (LIVE_LIMITS_MS), so a change made on one instance of a shared database applies on every
 * instance within that time, and at once on the instance that made it. Also the server-wide TTLs and
 * sweep interval the job sweep goes by.
 */
import type { Kysely } from 'kysely';
import { allTeamLimits, getSettings, LIMIT_KEYS, type Limits, type Settings } from '../accounts/settings.js';
import type { DaemonConfig } from '../config.js';
import type { Database } from '../store/schema.js';

/** How long a read of the limits is reused before the database is asked again. */
export const LIVE_LIMITS_MS = 2000;

interface Snapshot {
  settings: Settings;
  teams: Map<string, Partial<Limits>>;
  at: number;
}

export class LiveLimits {
  private snap?: Snapshot;
  private loading?: Promise<Snapshot>;
  /** Reads started and the newest one applied: an older read that ends late never wins. */
  private started = 0;
  private applied = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly config: DaemonConfig,
    private readonly maxAgeMs = LIVE_LIMITS_MS,
  ) {}

  /** Reads the record and every team's overrides again, now (after a write on this instance). */
  refresh(): Promise<Snapshot> {
    const n = ++this.started;
    const read = Promise.all([getSettings(this.db, this.config), allTeamLimits(this.db)]).then(([settings, teams]) => {
      const snap = { settings, teams, at: Date.now() };
      if (n > this.applied) {
        this.applied = n;
        this.snap = snap;
      }
      return this.snap ?? snap;
    });
    this.loading = read;
    const done = () => {
      if (this.loading === read) this.loading = undefined;
    };
    read.then(done, done);
    return read;
  }

  private fresh(): Snapshot | undefined {
    return this.snap && Date.now() - this.snap.at < this.maxAgeMs ? this.snap : undefined;
  }

  /** The last read while fresh, else the read under way or a new one. */
  private current(): Promise<Snapshot> | Snapshot {
    return this.fresh() ?? this.loading ?? this.refresh();
  }

  async settings(): Promise<Settings> {
    return (await this.current()).settings;
  }

  /** The limits for a user (their team's overrides over the server's values). */
  async forUser(user: { teamId?: string | null } | undefined): Promise<Limits> {
    return effective(await this.current(), user?.teamId);
  }

  /**
   * The same without waiting, for hot paths (the rate limit of every request): the last read, refreshed
   * in the background when old; the environment's values before the first read.
   */
  peekUser(user: { teamId?: string | null } | undefined): Limits {
    if (!this.fresh() && !this.loading) this.refresh().catch(() => {});
    if (!this.snap) return pick(this.config);
    return effective(this.snap, user?.teamId);
  }
}

function pick(from: Limits): Limits {
  return Object.fromEntries(LIMIT_KEYS.map((k) => [k, from[k]])) as unknown as Limits;
}

function effective(snap: Snapshot, teamId: string | null | undefined): Limits {
  const team = teamId ? snap.teams.get(teamId) : undefined;
  return { ...pick(snap.settings), ...team };
}

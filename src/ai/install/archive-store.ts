/**
 * Where an instance keeps bundle archives for the others (scaled mode with object storage): the
 * daemon passes one in (daemon/features/archive-store.ts), this layer only calls it. An archive is
 * what exportBundle writes, so the instance that fetches one installs it with importBundle, which
 * verifies every file and runtime tarball against the pins as for any import.
 */
export interface BundleArchiveStore {
  /** Keeps `file`, an archive of `bundle` at `version`, replacing an older archive of that version. */
  put(bundle: string, version: string, file: string): Promise<void>;
  /** True when an archive of `bundle` at `version` is kept. */
  has(bundle: string, version: string): Promise<boolean>;
  /** Copies the kept archive to `dest`, checked against its digest; false when none is kept. */
  get(bundle: string, version: string, dest: string): Promise<boolean>;
  /** Drops every kept archive of `bundle` (an admin removed it: other instances must not bring it back). */
  drop(bundle: string): Promise<void>;
}

/**
 * The shell scripts kiln deploy runs on the remote (POSIX sh). Values are single-quoted, so paths
 * with spaces or quotes cannot break out of them.
 */

export function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface Layout {
  /** Extra daemon settings (--env NAME=VALUE), after the ones kiln deploy sets. */
  env?: [string, string][];
  dir: string;
  dataDir: string;
  port: number;
  host: string;
  node: string;
  /** The daemon serves https (its own certificate or the admin's). */
  tls?: boolean;
}

/** What the remote has: node and its version, npm, systemd, who we are. One line per fact. */
export const PROBE = `
echo "uid=$(id -u)"
echo "home=$HOME"
n=$(command -v node || true)
[ -z "$n" ] && for c in /usr/local/bin/node /usr/bin/node "$HOME/.local/bin/node"; do [ -x "$c" ] && n=$c && break; done
echo "node=$n"
[ -n "$n" ] && echo "nodeVersion=$("$n" -p process.versions.node 2>/dev/null)"
m=$(command -v npm || true)
[ -z "$m" ] && [ -n "$n" ] && [ -x "$(dirname "$n")/npm" ] && m="$(dirname "$n")/npm"
echo "npm=$m"
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then echo "systemd=yes"; else echo "systemd=no"; fi
command -v tar >/dev/null 2>&1 && echo "tar=yes"
`;

/**
 * Unpacks the release into DIR/releases/ID (once), installs its production dependencies (or reuses
 * the current release's when package-lock.json is unchanged), then points DIR/current at it.
 */
export function installScript(l: Layout, id: string, tarball: string, npm: string): string {
  const rel = `${l.dir}/releases/${id}`;
  return `set -eu
umask 022
PATH=${sq(l.node.replace(/\/[^/]+$/, ''))}:$PATH
DIR=${sq(l.dir)}
REL=${sq(rel)}
TGZ=${sq(tarball)}
if [ ! -f "$REL/.installed" ]; then
  rm -rf "$REL.tmp"
  mkdir -p "$REL.tmp"
  tar -xzf "$TGZ" -C "$REL.tmp"
  if [ -f "$DIR/current/package-lock.json" ] && [ -d "$DIR/current/node_modules" ] && cmp -s "$DIR/current/package-lock.json" "$REL.tmp/package-lock.json"; then
    echo "kiln deploy: dependencies unchanged, reusing them" >&2
    cp -a "$DIR/current/node_modules" "$REL.tmp/node_modules"
  else
    echo "kiln deploy: installing dependencies (npm ci --omit=dev)" >&2
    (cd "$REL.tmp" && ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip ${sq(npm)} ci --omit=dev --no-audit --no-fund --loglevel=error >&2)
  fi
  touch "$REL.tmp/.installed"
  rm -rf "$REL"
  mv "$REL.tmp" "$REL"
fi
ln -sfn "$REL" "$DIR/current.new"
mv -T "$DIR/current.new" "$DIR/current" 2>/dev/null || { rm -f "$DIR/current"; mv "$DIR/current.new" "$DIR/current"; }
rm -f "$TGZ"
# Keep the three newest releases.
ls -1dt "$DIR"/releases/*/ 2>/dev/null | tail -n +4 | while read -r old; do [ "$old" != "$REL/" ] && rm -rf "$old"; done
echo "installed=$REL"
`;
}

/**
 * How long a stop may take before the daemon is killed: its drain (SHUTDOWN_GRACE_S, as --env sets it;
 * 30 s by default) and a margin for stopping the engines. Fixed at 45 s (systemd) and 20 s (detached)
 * before, a raised SHUTDOWN_GRACE_S was cut short, and a detached upgrade killed jobs the default allows.
 */
export function stopTimeoutS(l: Layout): number {
  const set = (l.env ?? []).filter(([k]) => k === 'SHUTDOWN_GRACE_S').pop()?.[1];
  const grace = set !== undefined && set.trim() !== '' && Number(set) >= 0 ? Number(set) : 30;
  return Math.ceil(grace) + 15;
}

/**
 * A value in a unit file: systemd expands `%` specifiers in ExecStart, WorkingDirectory and Environment
 * (`%%` is a literal one) and splits ExecStart on spaces unless quoted (C-style escapes inside).
 */
function unitWord(s: string): string {
  return JSON.stringify(s).replace(/%/g, '%%');
}

function envLines(l: Layout): [string, string][] {
  return [['PORT', String(l.port)], ['HOST', l.host], ['DATA_DIR', l.dataDir], ['NODE_ENV', 'production'], ...(l.env ?? [])];
}

/**
 * The daemon starts through bin/kiln, whose shell part sets what node must have before it starts
 * (glibc's malloc tunables, V8's young-generation cap, libuv's pool size for JOB_CONCURRENCY jobs)
 * and then runs the `node` first on PATH: the one this deploy found.
 */
function serveCommand(l: Layout): { path: string; argv: string[] } {
  const nodeDir = l.node.slice(0, l.node.lastIndexOf('/')) || '/';
  return { path: `${nodeDir}:/usr/local/bin:/usr/bin:/bin`, argv: [`${l.dir}/current/bin/kiln`, 'serve'] };
}

export function systemdUnit(l: Layout, user: string): string {
  const serve = serveCommand(l);
  return `[Unit]
Description=kiln: image, video, audio and document tools over HTTP
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=${user}
${[...envLines(l), ['PATH', serve.path]].map(([k, v]) => `Environment=${unitWord(`${k}=${v}`)}`).join('\n')}
# bin/kiln sets glibc's malloc tunables, V8's young-generation cap and libuv's pool size, then runs node.
WorkingDirectory=${`${l.dir}/current`.replace(/%/g, '%%')}
ExecStart=${serve.argv.map(unitWord).join(' ')}
Restart=on-failure
RestartSec=3
KillSignal=SIGTERM
# Drains for SHUTDOWN_GRACE_S (30 s by default), then stops its engines: give it that and a margin.
TimeoutStopSec=${stopTimeoutS(l)}

[Install]
WantedBy=multi-user.target
`;
}

export function systemdStartScript(l: Layout, unit: string): string {
  return `set -eu
mkdir -p ${sq(l.dataDir)}
cat > /etc/systemd/system/kiln.service.new <<'KILN_UNIT_EOF'
${unit}KILN_UNIT_EOF
mv /etc/systemd/system/kiln.service.new /etc/systemd/system/kiln.service
systemctl daemon-reload
systemctl enable kiln.service >/dev/null 2>&1
systemctl restart kiln.service
echo "started=systemd"
`;
}

/** Without systemd: stop the previous process (pid file), start a detached one with its log beside. */
export function detachedStartScript(l: Layout): string {
  const serve = serveCommand(l);
  const env = [...envLines(l), ['PATH', serve.path]].map(([k, v]) => `${k}=${sq(v)}`).join(' ');
  return `set -eu
DATA=${sq(l.dataDir)}
PIDFILE="$DATA/kiln.pid"
mkdir -p "$DATA"
if [ -f "$PIDFILE" ]; then
  old=$(cat "$PIDFILE")
  if [ -n "$old" ] && kill -0 "$old" 2>/dev/null; then
    kill -TERM "$old" 2>/dev/null || true
    i=0
    # Its drain (SHUTDOWN_GRACE_S) and a margin, as systemd's TimeoutStopSec.
    while kill -0 "$old" 2>/dev/null && [ $i -lt ${stopTimeoutS(l) * 5} ]; do sleep 0.2; i=$((i+1)); done
    kill -0 "$old" 2>/dev/null && kill -KILL "$old" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
fi
cd ${sq(l.dir + '/current')}
# setsid may fork (when it would be a group leader): the shell it runs writes its own pid, then execs node.
${env} nohup setsid sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$PIDFILE" ${serve.argv.map(sq).join(' ')} >>"$DATA/kiln.log" 2>&1 </dev/null &
i=0
while [ ! -s "$PIDFILE" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
echo "started=detached pid=$(cat "$PIDFILE")"
`;
}

/**
 * Polls /api/v1/health on the remote itself (its loopback), with the remote's node. Over https the
 * certificate is not checked here: nothing secret is sent, and the client pins it later.
 */
export function healthScript(l: Layout, timeoutS: number): string {
  const host = l.host === '0.0.0.0' || l.host === '::' ? '127.0.0.1' : l.host.includes(':') ? `[${l.host}]` : l.host;
  const url = `${l.tls ? 'https' : 'http'}://${host}:${l.port}/api/v1/health`;
  return `${sq(l.node)} -e ${sq(`
const end = Date.now() + ${timeoutS * 1000};
const get = (url) => new Promise((resolve) => {
  const req = require(url.startsWith('https:') ? 'https' : 'http').get(url, { rejectUnauthorized: false }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (d) => (body += d));
    res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
  });
  req.on('error', () => resolve(undefined));
  req.setTimeout(5000, () => req.destroy());
});
(async () => {
  for (;;) {
    const body = await get(${JSON.stringify(url)});
    if (body) { console.log('health=' + JSON.stringify(JSON.parse(body))); process.exit(0); }
    if (Date.now() > end) { console.log('health=timeout'); process.exit(1); }
    await new Promise((r) => setTimeout(r, 300));
  }
})();
`)}`;
}

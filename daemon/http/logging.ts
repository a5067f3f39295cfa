/**
 * The daemon's log: JSON lines on stdout (pino, through fastify), one line per request (method, route,
 * status, time, user), health probes at debug so they do not flood the info level. LOG_LEVEL picks the
 * level (fatal, error, warn, info, debug, trace; default info); LOG_FORMAT=pretty writes the same
 * records as readable text for a person at a terminal.
 */
import { Writable } from 'node:stream';
import { type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Routes polled by load balancers and orchestrators: logged at debug. */
const PROBES = new Set(['/api/v1/health', '/api/v1/readyz']);

export function logLevel(env: NodeJS.ProcessEnv = process.env): (typeof LEVELS)[number] {
  const v = (env.LOG_LEVEL ?? 'info').toLowerCase();
  return (LEVELS as readonly string[]).includes(v) ? (v as (typeof LEVELS)[number]) : 'info';
}

/** Readable lines (`12:00:01 INFO  POST /api/v1/tools/image/resize 200 35 ms`) from pino's JSON records. */
function prettyStream(out: NodeJS.WritableStream): Writable {
  let buf = '';
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      buf += chunk.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          const r = JSON.parse(line) as Record<string, unknown>;
          const { level, time, msg, pid: _pid, hostname: _host, ...rest } = r;
          const extra = Object.entries(rest)
            .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
            .join(' ');
          const t = new Date(Number(time)).toISOString().slice(11, 19);
          out.write(`${t} ${(NAMES[Number(level)] ?? String(level)).padEnd(5)} ${msg ?? ''}${extra ? ' ' + extra : ''}\n`);
        } catch {
          out.write(line + '\n');
        }
      }
      cb();
    },
  });
}

/** One line per answered request (fastify's default writes two), probes at debug, failures at error. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url;
    const line = {
      method: request.method,
      url: request.url.split('?')[0],
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
      ...(request.user ? { user: request.user.username } : {}),
      ...(error ? { err: error } : {}),
    };
    if (error) reply.log.error(line, 'request');
    else if (route && PROBES.has(route)) reply.log.debug(line, 'request');
    else reply.log.info(line, 'request');
  }
}

/** fastify's logger options: off, or pino at LOG_LEVEL in LOG_FORMAT with one line per request. */
export function loggerOptions(
  enabled: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Pick<FastifyServerOptions, 'logger' | 'logController'> {
  if (!enabled) return { logger: false };
  const pretty = (env.LOG_FORMAT ?? 'json').toLowerCase() === 'pretty';
  return {
    logger: { level: logLevel(env), ...(pretty ? { stream: prettyStream(process.stdout) } : {}) },
    logController: new OneLinePerRequest(),
  };
}

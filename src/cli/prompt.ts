/**
 * Questions on the terminal, with hidden input for secrets. Without a TTY the answers are read as
 * lines from stdin (in the order asked), so scripts can pipe them in: a secret is then never an
 * argument (process list) nor an environment variable (inherited by children).
 */
import readline from 'node:readline';
import { KilnError } from '../core/errors.js';

let lines: AsyncIterator<string> | undefined;

async function nextLine(question: string): Promise<string> {
  if (!lines) lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false })[Symbol.asyncIterator]();
  const r = await lines.next();
  if (r.done) throw new KilnError('USAGE_ERROR', `No answer on stdin for "${question.replace(/:\s*$/, '')}".`);
  return r.value;
}

/** Closes the stdin reader so the process can exit. */
export function closePrompts(): void {
  void lines?.return?.();
  lines = undefined;
}

export async function ask(question: string, opts: { hidden?: boolean } = {}): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) return nextLine(question);
  process.stderr.write(question);
  if (!opts.hidden) {
    const rl = readline.createInterface({ input, output: process.stderr, terminal: true });
    return new Promise((resolve) =>
      rl.once('line', (l) => {
        rl.close();
        resolve(l);
      }),
    );
  }
  // Raw mode, no echo: the secret never appears on screen nor in the terminal's scrollback.
  return new Promise((resolve, reject) => {
    let value = '';
    input.setRawMode(true);
    input.resume();
    input.setEncoding('utf8');
    const done = (err?: Error) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new KilnError('CANCELLED', 'Cancelled.'));
        if (ch === '\u0004') return done();
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch === '\u0015') value = '';
        else if (ch >= ' ') value += ch;
      }
    };
    input.on('data', onData);
  });
}

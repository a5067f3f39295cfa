// Preloaded into every test file's process by scripts/test.mjs when KILN_TEST_TIMES names a file: at
// exit, appends one line "<test file> <wall ms> <cpu ms>". The CPU time counts this process with its
// threads (the AI model host is a worker) and every child it waited for (kiln CLIs, daemons and the
// ffmpeg or LibreOffice they ran): unlike the wall time, it hardly moves when other work shares the
// machine, so it is the figure to compare between runs.
import { appendFileSync, readFileSync } from 'node:fs';

const file = process.argv[1] ?? '';
const log = process.env.KILN_TEST_TIMES;
if (log && file.endsWith('.test.js')) {
  process.on('exit', () => {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // utime, stime, cutime, cstime: fields 14-17, counted after the parenthesised command name.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    // Linux reports them in USER_HZ, 100 per second on every architecture node runs on.
    const pass = process.env.KILN_TEST_S3 === '1' ? ' (KILN_TEST_S3=1)' : '';
    appendFileSync(log, `${file}${pass}\t${Math.round(performance.now())}\t${ticks * 10}\n`);
  });
}

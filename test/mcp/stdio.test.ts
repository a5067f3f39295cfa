/**
 * `kiln mcp` spoken to by the SDK's own client over stdio, as an agent would: the tool list generated
 * from the catalog, real runs whose outputs are decoded, errors as isError results, cancellation.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { PRESETS } from '../../src/tools/presets.js';
import { TOOLS } from '../../src/tools/index.js';
import { describeEntry, type McpEntry } from '../../src/mcp/catalog.js';
import { REPO, kiln } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';
import { makeVideo } from '../helpers/media.js';

type Result = { isError?: boolean; structuredContent?: Record<string, any>; content: { type: string; text?: string }[] };

/**
 * `kiln mcp --local` spoken to line by line, without the SDK's client (which never sends malformed
 * requests); `stray` collects stdout lines that are not JSON.
 */
function rawServer(nodeArgs: string[] = []): { child: ChildProcessWithoutNullStreams; lines: Record<string, any>[]; stray: string[] } {
  const child = spawn(process.execPath, [...nodeArgs, path.join(REPO, 'dist', 'src', 'cli', 'main.js'), 'mcp', '--local'], {
    env: { ...process.env, KILN_SERVER: '' },
  });
  const lines: Record<string, any>[] = [];
  const stray: string[] = [];
  let buf = '';
  child.stdout.on('data', (b: Buffer) => {
    buf += b.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      try {
        lines.push(JSON.parse(line));
      } catch {
        stray.push(line);
      }
      buf = buf.slice(i + 1);
    }
  });
  return { child, lines, stray };
}

/** The tests' files are under the temp folder: the client names it as its root (the server refuses paths outside its roots). */
const TMP_ROOT = process.env.KILN_TMP_DIR ?? tmpdir();

/** A client over stdio; `roots` (a list the test may change; null: none) makes it declare the roots capability. */
async function connect(args: string[] = [], roots: string[] | null = [TMP_ROOT], cwd?: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(REPO, 'dist', 'src', 'cli', 'main.js'), 'mcp', ...args],
    env: { ...(process.env as Record<string, string>), KILN_SERVER: '' },
    stderr: 'ignore',
    ...(cwd ? { cwd } : {}),
  });
  const client = new Client({ name: 'kiln-test', version: '1.0.0' }, roots ? { capabilities: { roots: { listChanged: true } } } : {});
  // A root may be given as a URI as the client sends it (file://host/share).
  const uri = (r: string) => (r.includes('://') ? r : pathToFileURL(r).href);
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((r) => ({ uri: uri(r) })) }));
  await client.connect(transport);
  return client;
}

describe('kiln mcp (stdio)', () => {
  const dir = tempDir('kiln-mcp-');
  let client: Client;
  before(async () => {
    client = await connect();
  });
  after(async () => {
    await client.close();
  });

  it('lists every tool and preset with schemas carrying the settings constraints', async () => {
    const { tools } = await client.listTools();
    assert.equal(tools.length, TOOLS.length + PRESETS.length);
    const resize = tools.find((t) => t.name === 'resize')!;
    const props = resize.inputSchema.properties as Record<string, Record<string, unknown>>;
    assert.equal(props.width!.type, 'integer');
    assert.equal(props.width!.minimum, 1);
    assert.deepEqual(props.fit!.enum, ['cover', 'contain', 'fill', 'inside', 'outside']);
    assert.equal(props.withoutEnlargement!.default, false);
    assert.ok(resize.inputSchema.required?.includes('input'));
    assert.ok(props.output, 'file tools take an output path');
    const info = tools.find((t) => t.name === 'info')!;
    assert.equal(info.annotations?.readOnlyHint, true);
    assert.equal((info.inputSchema.properties as Record<string, unknown>).output, undefined);
    assert.equal(resize.annotations?.readOnlyHint, false);
    const preset = tools.find((t) => t.name === 'png-to-jpg')!;
    assert.equal((preset.inputSchema.properties as Record<string, unknown>).format, undefined, 'a preset fixes its format');
    const compare = tools.find((t) => t.name === 'compare')!;
    assert.ok(compare.inputSchema.required?.includes('target'), 'the second file has a name of its own');
  });

  it('runs resize next to the input and answers the output path', async () => {
    const input = await makeImage(dir, 'photo.png', 200, 100);
    const r = (await client.callTool({ name: 'resize', arguments: { input, width: 50 } })) as Result;
    assert.notEqual(r.isError, true, JSON.stringify(r));
    const out = r.structuredContent!.outputs[0].path as string;
    assert.equal(path.dirname(out), dir);
    const meta = await sharp(out).metadata();
    assert.equal(meta.width, 50);
    assert.equal(meta.height, 25);
    assert.equal(meta.format, 'png');
  });

  it('runs a PDF tool into a named output file', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([300, 200]);
    doc.addPage([300, 200]);
    const input = path.join(dir, 'two.pdf');
    await writeFile(input, await doc.save());
    const output = path.join(dir, 'out', 'rotated.pdf');
    const r = (await client.callTool({ name: 'rotate-pdf', arguments: { input, angle: 90, output } })) as Result;
    assert.notEqual(r.isError, true, JSON.stringify(r));
    assert.equal(r.structuredContent!.outputs[0].path, output);
    const back = await PDFDocument.load(await readFile(output));
    assert.deepEqual(
      back.getPages().map((p) => p.getRotation().angle),
      [90, 90],
    );
  });

  it('answers each file of a tool that writes several, not their folder', async () => {
    const doc = await PDFDocument.create();
    for (const w of [100, 200, 300]) doc.addPage([w, 100]);
    const input = path.join(dir, 'three.pdf');
    await writeFile(input, await doc.save());
    // Twice into one folder: the answer names this call's files, not the folder where both calls' lie.
    for (const call of [1, 2]) {
      const r = (await client.callTool({
        name: 'pdf-to-image',
        arguments: { input, dpi: 72, output: path.join(dir, 'pages') + path.sep },
      })) as Result;
      assert.notEqual(r.isError, true, JSON.stringify(r));
      const outputs = r.structuredContent!.outputs as { path: string; name: string; size: number }[];
      assert.equal(outputs.length, 3, JSON.stringify(outputs));
      for (const [i, o] of outputs.entries()) {
        assert.equal(path.dirname(o.path), path.join(dir, 'pages'));
        assert.equal(o.name, path.basename(o.path));
        const bytes = await readFile(o.path);
        assert.equal(o.size, bytes.length);
        const meta = await sharp(bytes).metadata();
        assert.equal(meta.format, 'png');
        assert.equal(meta.width, [100, 200, 300][i], `call ${call}, page ${i + 1}`);
      }
      for (const o of outputs) assert.ok(r.content[0]!.text!.includes(o.path), 'the text names every file');
    }
    assert.equal(readdirSync(path.join(dir, 'pages')).length, 6);
  });

  it('runs a preset and a data tool', async () => {
    const input = await makeImage(dir, 'p.png', 64, 32);
    const r = (await client.callTool({ name: 'png-to-jpg', arguments: { input, output: path.join(dir, 'conv') + path.sep } })) as Result;
    assert.notEqual(r.isError, true, JSON.stringify(r));
    assert.equal((await sharp(r.structuredContent!.outputs[0].path).metadata()).format, 'jpeg');
    const info = (await client.callTool({ name: 'info', arguments: { input } })) as Result;
    assert.notEqual(info.isError, true, JSON.stringify(info));
    assert.equal(info.structuredContent!.data.width, 64);
    assert.deepEqual(info.structuredContent!.outputs, []);
    assert.equal(existsSync(path.join(dir, 'p.json')), false, 'a data tool writes no file');
    // Data longer than 2000 characters reaches a client that reads only the text whole, as valid JSON.
    const noise = path.join(dir, 'noise.png');
    await sharp(randomBytes(32 * 32 * 3), { raw: { width: 32, height: 32, channels: 3 } })
      .png()
      .toFile(noise);
    const b64 = (await client.callTool({ name: 'image-to-base64', arguments: { input: noise } })) as Result;
    assert.notEqual(b64.isError, true, JSON.stringify(b64));
    const text = b64.content.map((c) => c.text ?? '').join('\n');
    const json = JSON.parse(text.slice(text.indexOf('{')));
    assert.ok(JSON.stringify(json).length > 2000, 'a fixture whose data passes 2000 characters');
    assert.deepEqual(json, b64.structuredContent!.data);
  });

  it('answers bad settings and corrupt inputs with isError and the code, and keeps serving', async () => {
    const input = await makeImage(dir, 'ok.png', 40, 40);
    const bad = (await client.callTool({ name: 'resize', arguments: { input, width: -5 } })) as Result;
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent!.error.code, 'VALIDATION_ERROR');
    const corrupt = path.join(dir, 'corrupt.png');
    await writeFile(corrupt, 'this is not a png at all');
    const c = (await client.callTool({ name: 'resize', arguments: { input: corrupt, width: 10 } })) as Result;
    assert.equal(c.isError, true);
    assert.equal(c.structuredContent!.error.code, 'UNSUPPORTED_INPUT');
    const missing = (await client.callTool({ name: 'resize', arguments: { width: 10 } })) as Result;
    assert.equal(missing.isError, true);
    assert.equal(missing.structuredContent!.error.code, 'VALIDATION_ERROR');
    const unknown = (await client.callTool({ name: 'no-such-tool', arguments: {} })) as Result;
    assert.equal(unknown.isError, true);
    assert.equal(unknown.structuredContent!.error.code, 'NOT_FOUND');
    const ok = (await client.callTool({
      name: 'resize',
      arguments: { input, width: 20, output: path.join(dir, 'after-errors.png') },
    })) as Result;
    assert.notEqual(ok.isError, true);
  });

  it('refuses arguments it would otherwise ignore: an output that is no path, an input for a tool without files', async () => {
    const sub = path.join(dir, 'ignored');
    await mkdir(sub);
    const input = await makeImage(sub, 'i.png', 40, 40);
    for (const output of [5, '', { path: 'x.png' }]) {
      const r = (await client.callTool({ name: 'resize', arguments: { input, width: 10, output } })) as Result;
      assert.equal(r.isError, true, `output ${JSON.stringify(output)}: ${JSON.stringify(r)}`);
      assert.equal(r.structuredContent!.error.code, 'VALIDATION_ERROR');
      assert.equal(r.structuredContent!.error.details[0].path, 'output');
    }
    const barcode = (await client.callTool({ name: 'barcode-generate', arguments: { text: 'x', input } })) as Result;
    assert.equal(barcode.isError, true, JSON.stringify(barcode));
    assert.equal(barcode.structuredContent!.error.code, 'VALIDATION_ERROR');
    const info = (await client.callTool({ name: 'info', arguments: { input, output: path.join(sub, 'info.json') } })) as Result;
    assert.equal(info.isError, true, JSON.stringify(info));
    assert.equal(info.structuredContent!.error.code, 'VALIDATION_ERROR');
    assert.deepEqual(readdirSync(sub), ['i.png'], 'nothing written');
  });

  it('refuses an output that exists in its own words (no CLI flags an agent cannot pass)', async () => {
    const sub = path.join(dir, 'taken');
    await mkdir(sub);
    const input = await makeImage(sub, 't.png', 30, 20);
    await writeFile(path.join(sub, 'mine.png'), 'kept');
    const r = (await client.callTool({ name: 'resize', arguments: { input, width: 10, output: path.join(sub, 'mine.png') } })) as Result;
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(r.structuredContent!.error.code, 'OUTPUT_EXISTS');
    assert.match(r.structuredContent!.error.message, /mine\.png exists.*name another output \(kiln mcp never replaces a file\)\.$/);
    assert.doesNotMatch(r.structuredContent!.error.message, /-o\b|--/);
    assert.equal(await readFile(path.join(sub, 'mine.png'), 'utf8'), 'kept');
  });

  it('never replaces an output: calls at once and a file already there each keep theirs', async () => {
    const sub = path.join(dir, 'at-once');
    await mkdir(sub);
    const input = await makeImage(sub, 'c.png', 60, 40);
    // The default name of the first call (<stem>-<tool>.<ext>) is a file the user had.
    await writeFile(path.join(sub, 'c-resize.png'), 'kept');
    const widths = [11, 12, 13, 14];
    const results = (await Promise.all(
      widths.map((width) => client.callTool({ name: 'resize', arguments: { input, width } })),
    )) as Result[];
    const paths = results.map((r) => r.structuredContent!.outputs[0].path as string);
    assert.equal(new Set(paths).size, widths.length, `one file per call: ${paths}`);
    for (const [i, p] of paths.entries()) assert.equal((await sharp(p).metadata()).width, widths[i], p);
    assert.equal(await readFile(path.join(sub, 'c-resize.png'), 'utf8'), 'kept');
  });

  it('reports progress and stops a long video run when the call is cancelled', async () => {
    const vdir = tempDir('kiln-mcp-video-');
    const input = makeVideo(vdir, 'long.mp4', { width: 640, height: 360, durationS: 30, audio: false });
    const controller = new AbortController();
    const seen: number[] = [];
    const call = client.callTool({ name: 'convert-video', arguments: { input, format: 'webm' } }, undefined, {
      signal: controller.signal,
      timeout: 120_000,
      onprogress: (p) => {
        seen.push(p.progress);
        if (p.progress > 0) controller.abort();
      },
    });
    await assert.rejects(call);
    assert.ok(seen.length > 0, 'progress notifications arrived');
    // The run stops and removes what it started: no output, no partial file, once ffmpeg has been killed.
    for (let i = 0; i < 50 && readdirSync(vdir).length > 1; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(readdirSync(vdir), ['long.mp4']);
    const after = (await client.callTool({ name: 'info', arguments: { input: await makeImage(dir, 'later.png', 8, 8) } })) as Result;
    assert.notEqual(after.isError, true);
  });

  it('on SIGTERM stops the runs under way, kills their ffmpeg and removes their workspaces before it exits', async () => {
    const vdir = tempDir('kiln-mcp-term-');
    const tmp = tempDir('kiln-mcp-term-tmp-');
    const input = makeVideo(vdir, 'long.mp4', { width: 640, height: 360, durationS: 30, audio: false });
    const child = spawn(process.execPath, [path.join(REPO, 'dist', 'src', 'cli', 'main.js'), 'mcp', '--local'], {
      cwd: vdir,
      env: { ...process.env, KILN_SERVER: '', KILN_TMP_DIR: tmp },
    });
    const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + '\n');
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'convert-video', arguments: { input, format: 'webm' }, _meta: { progressToken: 'p' } },
    });
    // Under way once ffmpeg, encoding, is a child of the server.
    // (A child that ends while it is read, ffprobe, throws: read again next time.)
    const ffmpegChildren = () => {
      try {
        return listFfmpeg();
      } catch {
        return [];
      }
    };
    const listFfmpeg = () =>
      readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter((pid) => pid && readFileSync(`/proc/${pid}/cmdline`, { encoding: 'utf8', flag: 'r' }).includes('libvpx'))
        .map(Number);
    let children: number[] = [];
    try {
      for (let i = 0; i < 600 && !children.length; i++) {
        await new Promise((r) => setTimeout(r, 100));
        children = ffmpegChildren();
      }
      assert.ok(children.length > 0, `ffmpeg runs: ${out}`);
      assert.match(out, /notifications\/progress/);
      assert.notDeepEqual(readdirSync(tmp), [], 'the run has its workspace');
      child.kill('SIGTERM');
      // It died on the spot: ffmpeg ran on, orphaned, and the workspace stayed in the temp folder.
      assert.equal(await exit, 143);
    } finally {
      child.kill('SIGKILL');
    }
    for (const pid of children) assert.equal(existsSync(`/proc/${pid}`), false, `child ${pid} was killed`);
    assert.deepEqual(readdirSync(tmp), [], 'no workspace left');
    assert.deepEqual(readdirSync(vdir), ['long.mp4'], 'no output, no partial file');
  });

  it('answers a line that is not JSON, or not JSON-RPC, with an error of id null and keeps serving', async () => {
    const { child, lines } = rawServer();
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: init })}\n`);
    child.stdin.write('{"jsonrpc": "2.0", "id": 2, "method": \n');
    child.stdin.write(`${JSON.stringify({ hello: 'world' })}\n`);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' })}\n`);
    try {
      // They were dropped without an answer: the client waited for ever.
      for (let i = 0; i < 200 && !lines.some((l) => l.id === 3); i++) await new Promise((r) => setTimeout(r, 50));
      const errors = lines.filter((l) => l.id === null).map((l) => l.error.code);
      assert.deepEqual(errors, [-32700, -32600], JSON.stringify(lines));
      assert.deepEqual(lines.find((l) => l.id === 3)?.result, {});
    } finally {
      child.kill();
    }
  });

  it("keeps stdout for JSON-RPC: a library's console.log during a session goes to stderr", async () => {
    // Once the server has answered (and set itself up), a library writes a line with console.log.
    const preload = path.join(tempDir('kiln-mcp-stray-'), 'stray.mjs');
    await writeFile(
      preload,
      [
        'const write = process.stdout.write.bind(process.stdout);',
        'let armed = true;',
        'process.stdout.write = (...a) => {',
        '  const r = write(...a);',
        "  if (armed) { armed = false; setImmediate(() => { console.log('a line from a library'); console.info('and another'); }); }",
        '  return r;',
        '};',
      ].join('\n'),
    );
    const { child, lines, stray } = rawServer(['--import', pathToFileURL(preload).href]);
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: init })}\n`);
    try {
      for (let i = 0; i < 200 && !lines.some((l) => l.id === 1); i++) await new Promise((r) => setTimeout(r, 50));
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`);
      for (let i = 0; i < 200 && !lines.some((l) => l.id === 2); i++) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(lines.find((l) => l.id === 2)?.result, {});
      assert.deepEqual(stray, [], 'nothing but JSON-RPC on stdout');
      assert.match(stderr, /a line from a library\nand another/);
    } finally {
      child.kill();
    }
  });

  it('answers tools/call with arguments that are no object, or a name that is no string, as -32602 invalid params', async () => {
    const { child, lines } = rawServer();
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...(m as object) })}\n`);
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    send({ method: 'notifications/initialized' });
    const bad = [
      { name: 'resize', arguments: 'width=10' },
      { name: 'resize', arguments: [1, 2] },
      { name: 'resize', arguments: null },
      { name: 42 },
    ];
    for (const [i, params] of bad.entries()) send({ id: 10 + i, method: 'tools/call', params });
    send({ id: 20, method: 'tools/list', params: { cursor: 5 } });
    send({ id: 30, method: 'ping' });
    try {
      for (let i = 0; i < 200 && !lines.some((l) => l.id === 30); i++) await new Promise((r) => setTimeout(r, 50));
      for (const id of [10, 11, 12, 13, 20]) {
        const l = lines.find((x) => x.id === id);
        assert.equal(l?.error?.code, -32602, `${id}: ${JSON.stringify(l)}`);
      }
      assert.match(lines.find((x) => x.id === 10)?.error.message, /arguments/);
      assert.deepEqual(lines.find((l) => l.id === 30)?.result, {}, 'still serving');
    } finally {
      child.kill();
    }
  });

  it('refuses files outside its roots (links out of them too), follows the client when its roots change; --root and the working directory otherwise', async () => {
    const inside = tempDir('kiln-mcp-roots-');
    const outside = tempDir('kiln-mcp-outside-');
    const secret = await makeImage(outside, 'secret.png', 20, 10);
    await symlink(secret, path.join(inside, 'link.png'));
    const mine = await makeImage(inside, 'mine.png', 20, 10);
    const roots = [inside];
    const agent = await connect([], roots);
    const forbidden = async (args: Record<string, unknown>, name = 'info') => {
      const r = (await agent.callTool({ name, arguments: args })) as Result;
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.equal(r.structuredContent!.error.code, 'FORBIDDEN', JSON.stringify(r));
    };
    try {
      // Without roots an agent had /etc/passwd converted to a PDF it could read.
      await forbidden({ input: '/etc/passwd', output: inside + '/' }, 'wordprocessor-to-pdf');
      await forbidden({ input: path.join(inside, 'link.png') });
      await forbidden({ input: mine, width: 5, output: path.join(outside, 'out.png') }, 'resize');
      assert.ok(!existsSync(path.join(outside, 'out.png')));
      const ok = (await agent.callTool({ name: 'info', arguments: { input: mine } })) as Result;
      assert.notEqual(ok.isError, true, JSON.stringify(ok));
      roots.splice(0, 1, outside);
      await agent.sendRootsListChanged();
      await new Promise((r) => setTimeout(r, 200));
      const now = (await agent.callTool({ name: 'info', arguments: { input: secret } })) as Result;
      assert.notEqual(now.isError, true, JSON.stringify(now));
      await forbidden({ input: mine });
    } finally {
      await agent.close();
    }
    // A client without roots: --root names the folders, else the working directory is the one.
    for (const [args, cwd] of [
      [['--root', inside], undefined],
      [[], inside],
    ] as const) {
      const other = await connect([...args], null, cwd);
      try {
        const ok = (await other.callTool({ name: 'info', arguments: { input: mine } })) as Result;
        assert.notEqual(ok.isError, true, JSON.stringify(ok));
        const no = (await other.callTool({ name: 'info', arguments: { input: secret } })) as Result;
        assert.equal(no.structuredContent!.error.code, 'FORBIDDEN', JSON.stringify(no));
      } finally {
        await other.close();
      }
    }
  });

  it('leaves out a client root that is no local folder (a network share, a malformed URI) and uses the others', async () => {
    const c = await connect([], ['file://fileserver/share', 'file:///broken/%E0%A4%A', TMP_ROOT]);
    try {
      const input = await makeImage(dir, 'roots-share.png', 40, 20);
      const r = (await c.callTool({ name: 'resize', arguments: { input, width: 10 } })) as Result;
      // Every call failed with INTERNAL (File URL host must be "localhost" or empty).
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.equal((await sharp(r.structuredContent!.outputs[0].path).metadata()).height, 5);
      const outside = (await c.callTool({ name: 'info', arguments: { input: '/etc/hostname' } })) as Result;
      assert.equal(outside.structuredContent!.error.code, 'FORBIDDEN');
    } finally {
      await c.close();
    }
  });

  it('exposes a subset with --tools and --section', async () => {
    const sub = await connect(['--section', 'pdf', '--tools', '^(rotate|merge)']);
    try {
      const { tools } = await sub.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['merge-pdf', 'rotate-pdf']);
    } finally {
      await sub.close();
    }
  });

  it('kiln mcp --list prints what would be exposed; a tool whose bundles are missing says how to install them', async () => {
    const r = await kiln(['mcp', '--list', '--json', '--section', 'image', '--tools', '^(info|resize)$']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; readOnly: boolean; available: boolean });
    assert.deepEqual(
      lines.map((l) => [l.name, l.readOnly, l.available]),
      [
        ['info', true, true],
        ['resize', false, true],
      ],
    );
    const bad = await kiln(['mcp', '--section', 'nope']);
    assert.equal(bad.code, 2);
    const entry = { tool: TOOLS.find((t) => t.id === 'resize')!, dataOnly: false, bundles: ['face-detection'] } as McpEntry;
    const text = describeEntry(entry, { available: false, missingBundles: ['face-detection'] });
    assert.match(text, /NOT INSTALLED: needs the feature bundle face-detection/);
    assert.match(text, /kiln features install resize/);
  });
});

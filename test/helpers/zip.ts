/** Reads a whole ZIP (a file path or a buffer) into name → bytes, for asserting on archive outputs. */
import yauzl from 'yauzl';

export function readZip(src: string | Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    const onOpen = (err: Error | null, zip?: yauzl.ZipFile) => {
      if (err || !zip) return reject(err);
      const out = new Map<string, Buffer>();
      zip.on('error', reject);
      zip.on('entry', (e: yauzl.Entry) => {
        if (e.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(e, (er, rs) => {
          if (er || !rs) return reject(er);
          const chunks: Buffer[] = [];
          rs.on('data', (c: Buffer) => chunks.push(c));
          rs.on('error', reject);
          rs.on('end', () => {
            out.set(e.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.readEntry();
    };
    if (typeof src === 'string') yauzl.open(src, { lazyEntries: true }, onOpen);
    else yauzl.fromBuffer(src, { lazyEntries: true }, onOpen);
  });
}

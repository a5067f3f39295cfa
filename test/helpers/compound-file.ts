/**
 * A minimal Compound File (MS-CFB, version 3, 512-byte sectors) whose root holds the named empty
 * streams: what Office wraps a password-protected DOCX/XLSX/PPTX in (`EncryptionInfo`,
 * `EncryptedPackage`), without the encrypted bytes, which nothing here reads.
 */
const END = 0xfffffffe;
const FREE = 0xffffffff;

export function compoundFile(streams: string[]): Buffer {
  if (streams.length > 3) throw new Error('one directory sector holds the root and 3 streams');
  const header = Buffer.alloc(512, 0);
  Buffer.from('d0cf11e0a1b11ae1', 'hex').copy(header, 0);
  header.writeUInt16LE(0x3e, 0x18); // minor version
  header.writeUInt16LE(3, 0x1a); // major version 3
  header.writeUInt16LE(0xfffe, 0x1c); // byte order
  header.writeUInt16LE(9, 0x1e); // 512-byte sectors
  header.writeUInt16LE(6, 0x20); // 64-byte mini sectors
  header.writeUInt32LE(1, 0x2c); // one FAT sector
  header.writeUInt32LE(1, 0x30); // directory in sector 1
  header.writeUInt32LE(4096, 0x38); // mini stream cut-off
  header.writeUInt32LE(END, 0x3c); // no mini FAT
  header.writeUInt32LE(END, 0x44); // no DIFAT sectors
  for (let k = 0; k < 109; k++) header.writeUInt32LE(k === 0 ? 0 : FREE, 0x4c + k * 4);
  const fat = Buffer.alloc(512, 0xff);
  fat.writeUInt32LE(0xfffffffd, 0); // sector 0 is the FAT
  fat.writeUInt32LE(END, 4); // sector 1, the directory, ends its chain
  const dir = Buffer.alloc(512, 0);
  const entry = (i: number, name: string, type: number, right: number, child: number) => {
    const at = i * 128;
    dir.write(name, at, 'utf16le');
    dir.writeUInt16LE((name.length + 1) * 2, at + 0x40);
    dir.writeUInt8(type, at + 0x42);
    dir.writeUInt8(1, at + 0x43); // black
    dir.writeUInt32LE(FREE, at + 0x44);
    dir.writeUInt32LE(right, at + 0x48);
    dir.writeUInt32LE(child, at + 0x4c);
    dir.writeUInt32LE(END, at + 0x74);
  };
  entry(0, 'Root Entry', 5, FREE, streams.length ? 1 : FREE);
  for (const [k, name] of streams.entries()) entry(k + 1, name, 2, k + 2 <= streams.length ? k + 2 : FREE, FREE);
  return Buffer.concat([header, fat, dir]);
}

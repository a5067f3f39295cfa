/**
 * The same small CSV in the four East Asian Windows code pages, as bytes: Node has no encoder for them
 * (the bytes were produced by Python's cp932/gbk/cp949/cp950 codecs). `text` is what each decodes to.
 */
export const CJK_CSV = {
  shift_jis: {
    text: '名前,都市,メモ\n山田太郎,東京,ありがとう\n',
    bytes: Buffer.from('96bc914f2c93738e732c838183820a8e52936391be98592c938c8b9e2c82a082e882aa82c682a40a', 'hex'),
  },
  gbk: {
    text: '姓名,城市,备注\n张伟,北京,谢谢你。\n',
    bytes: Buffer.from('d0d5c3fb2cb3c7cad02cb1b8d7a20ad5c5ceb02cb1b1bea92cd0bbd0bbc4e3a1a30a', 'hex'),
  },
  'euc-kr': {
    text: '이름,도시,메모\n김민수,서울,감사합니다\n',
    bytes: Buffer.from('c0ccb8a72cb5b5bdc32cb8deb8f00ab1e8b9cebcf62cbcadbfef2cb0a8bbe7c7d5b4cfb4d90a', 'hex'),
  },
  big5: {
    text: '姓名,城市,備註\n陳大文,臺北,謝謝你。\n',
    bytes: Buffer.from('a96da6572cabb0a5ab2cb3c6b5f90ab3afa46aa4e52cbb4fa55f2cc1c2c1c2a741a1430a', 'hex'),
  },
} as const;

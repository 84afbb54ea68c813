/**
 * The board-info area of an IPMI FRU EEPROM (IPMI Platform Management FRU Information
 * Storage Definition v1.0, sections 8 and 11), as AMD/Xilinx boards carry one: Kria SOMs
 * and their carrier cards (`xmutil boardid` and `fru-print.py` read the same bytes through
 * the at24 driver's `eeprom` file in sysfs), ZCU10x evaluation boards. Only the board area
 * is read: manufacturer, product name, serial and part number.
 */
export interface FruBoardInfo {
  manufacturer?: string;
  product?: string;
  serial?: string;
  part_number?: string;
}

/** Bytes of the EEPROM worth reading: the common header and a board area fit well inside. */
export const FRU_READ_BYTES = 512;

const sum = (bytes: Uint8Array) => bytes.reduce((n, b) => (n + b) & 0xff, 0);

/** Decodes one type/length field; undefined at the end marker (0xC1) or past the area. */
function field(area: Uint8Array, at: number): { value: string; next: number } | undefined {
  const tl = area[at];
  if (tl === undefined || tl === 0xc1) return undefined;
  const type = tl >> 6;
  const length = tl & 0x3f;
  const bytes = area.subarray(at + 1, at + 1 + length);
  if (bytes.length < length) return undefined;
  let value: string;
  if (type === 3 || type === 2) value = Buffer.from(bytes).toString('latin1'); // 8-bit ASCII (2: 6-bit packed, rare: read as is)
  else if (type === 0) value = Buffer.from(bytes).toString('hex'); // binary
  else value = [...bytes].map((b) => String.fromCharCode(b)).join(''); // BCD plus: digits, space, dash, dot
  // Printable characters only, without the padding NULs and spaces some EEPROMs carry.
  value = value.replace(/[^\x20-\x7e]/g, '').trim();
  return { value, next: at + 1 + length };
}

/** The board-info area of a FRU image, or undefined when the bytes are not a valid FRU (checksums). */
export function parseFruBoardInfo(image: Uint8Array): FruBoardInfo | undefined {
  const header = image.subarray(0, 8);
  if (header.length < 8 || header[0] !== 0x01 || sum(header) !== 0) return undefined;
  const start = (header[3] ?? 0) * 8;
  if (start === 0) return undefined;
  const length = (image[start + 1] ?? 0) * 8;
  const area = image.subarray(start, start + length);
  if (length === 0 || area.length < length || area[0] !== 0x01 || sum(area) !== 0) return undefined;
  const names = ['manufacturer', 'product', 'serial', 'part_number'] as const;
  const info: FruBoardInfo = {};
  let at = 6; // version, length, language, three bytes of manufacturing date
  for (const name of names) {
    const f = field(area, at);
    if (!f) break;
    if (f.value) info[name] = f.value;
    at = f.next;
  }
  return info;
}

/** Encodes a FRU image with a board area (the simulated board's EEPROMs and the tests use it). */
export function encodeFruBoardInfo(info: FruBoardInfo): Buffer {
  const fields = [info.manufacturer, info.product, info.serial, info.part_number, ''].map((v) => {
    const bytes = Buffer.from((v ?? '').slice(0, 63), 'latin1');
    return Buffer.concat([Buffer.from([0xc0 | bytes.length]), bytes]);
  });
  let body = Buffer.concat([Buffer.from([0x01, 0, 0x19, 0, 0, 0]), ...fields, Buffer.from([0xc1])]);
  const padded = Math.ceil((body.length + 1) / 8) * 8;
  body = Buffer.concat([body, Buffer.alloc(padded - body.length)]);
  body[1] = padded / 8;
  body[padded - 1] = (0x100 - sum(body.subarray(0, padded - 1))) & 0xff;
  const header = Buffer.from([0x01, 0, 0, 1, 0, 0, 0, 0]);
  header[7] = (0x100 - sum(header.subarray(0, 7))) & 0xff;
  return Buffer.concat([header, body]);
}

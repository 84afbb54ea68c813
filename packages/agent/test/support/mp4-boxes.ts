/** Just enough ISO-BMFF (MP4) parsing to check a file is a real H.264 video. */
export interface Box {
  type: string;
  start: number;
  size: number;
  children: Box[];
}

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'edts', 'dinf']);

export function parseBoxes(buf: Buffer, start = 0, end = buf.length): Box[] {
  const boxes: Box[] = [];
  let at = start;
  while (at + 8 <= end) {
    let size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    if (size < header || at + size > end) throw new Error(`box ${type} at ${at} has a bad size ${size}`);
    const box: Box = { type, start: at, size, children: [] };
    if (CONTAINERS.has(type)) box.children = parseBoxes(buf, at + header, at + size);
    if (type === 'stsd') {
      // version/flags (4), entry count (4), then sample entries (boxes).
      box.children = parseBoxes(buf, at + header + 8, at + size).map((b) => ({ ...b, children: [] }));
    }
    boxes.push(box);
    at += size;
  }
  return boxes;
}

export function findBox(boxes: Box[], path: string[]): Box | undefined {
  const [first, ...rest] = path;
  const box = boxes.find((b) => b.type === first);
  if (!box || rest.length === 0) return box;
  return findBox(box.children, rest);
}

/** Movie duration in seconds from `mvhd`. */
export function movieDurationSeconds(buf: Buffer, boxes: Box[]): number {
  const mvhd = findBox(boxes, ['moov', 'mvhd']);
  if (!mvhd) throw new Error('no mvhd');
  const body = mvhd.start + 8;
  const version = buf[body]!;
  if (version === 1) return Number(buf.readBigUInt64BE(body + 24)) / buf.readUInt32BE(body + 20);
  return buf.readUInt32BE(body + 16) / buf.readUInt32BE(body + 12);
}

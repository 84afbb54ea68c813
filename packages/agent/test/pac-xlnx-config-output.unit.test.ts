import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { XlnxConfigError } from '../src/pac/pac-errors.ts';
import { parseXlnxConfigQuery } from '../src/pac/xlnx-config-output.ts';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'pac');
const sample = (name: string) => fs.readFileSync(path.join(fixtures, name), 'utf8');

describe('parseXlnxConfigQuery', () => {
  it('reads one active PAC (the documented output)', () => {
    expect(parseXlnxConfigQuery(sample('query-one-active.txt'))).toEqual({
      pacs: [
        {
          name: 'zcu104-platform-cfg1',
          active: true,
          board: 'zcu104',
          assets_dir: '/boot/firmware/xlnx-config/test_pac/hwconfig/cfg1/zcu104',
        },
      ],
      active: 'zcu104-platform-cfg1',
    });
  });

  it('reads a PAC with none active, its row not aligned with the header', () => {
    expect(parseXlnxConfigQuery(sample('query-none-active.txt'))).toEqual({
      pacs: [
        {
          name: 'zcu104-platform-cfg1',
          active: false,
          board: 'zcu104',
          assets_dir: '/boot/firmware/xlnx-config/pac/hwconfig/cfg1/zcu104',
        },
      ],
      active: null,
    });
  });

  it('reads several PACs, each row followed by a dashed line', () => {
    const result = parseXlnxConfigQuery(sample('query-several.txt'));
    expect(result.pacs.map((pac) => [pac.name, pac.active, pac.board])).toEqual([
      ['test_platform', false, 'zcu102'],
      ['vadd-cfg', true, 'zcu102'],
      ['dpu-b4096', false, 'zcu102'],
    ]);
    expect(result.pacs[2]?.assets_dir).toBe('/usr/local/share/xlnx-config/dpu_pac/hwconfig/b4096/zcu102');
    expect(result.active).toBe('vadd-cfg');
  });

  it('reads several PACs without dashed lines between the rows', () => {
    const result = parseXlnxConfigQuery(sample('query-several-no-separators.txt'));
    expect(result.pacs.map((pac) => pac.name)).toEqual(['adder', 'mnist_float', 'stream_32x128_SP']);
    expect(result.pacs.every((pac) => !pac.active && pac.board === 'zcu104')).toBe(true);
    expect(result.pacs[2]?.assets_dir).toBe(
      '/boot/firmware/xlnx-config/PAC_container/hwconfig/stream_32x128_SP/zcu104',
    );
    expect(result.active).toBeNull();
  });

  it.each(['query-long-names.txt', 'query-long-names-aligned.txt'])(
    'reads a long name that pushes the column wider (%s)',
    (file) => {
      const result = parseXlnxConfigQuery(sample(file));
      expect(result.pacs.map((pac) => [pac.name, pac.active])).toEqual([
        ['short', false],
        ['zcu104-vitis-ai-dpu-b4096-with-video-codec-unit-cfg', true],
      ]);
      expect(result.active).toBe('zcu104-vitis-ai-dpu-b4096-with-video-codec-unit-cfg');
      expect(result.pacs[1]?.assets_dir).toMatch(/^\/boot\/firmware\/xlnx-config\/very-long.*\/zcu104$/);
    },
  );

  it('takes the board name from the header (kv260, kr260)', () => {
    const kv260 = parseXlnxConfigQuery(sample('query-kv260.txt'));
    expect(kv260.pacs.map((pac) => [pac.name, pac.board, pac.active])).toEqual([
      ['kv260-smartcam', 'kv260', false],
      ['kv260-aibox-reid', 'kv260', true],
    ]);
    expect(kv260.active).toBe('kv260-aibox-reid');
    const kr260 = parseXlnxConfigQuery(sample('query-kr260.txt'));
    expect(kr260).toEqual({
      pacs: [
        {
          name: 'kr260-ros2-perception',
          active: false,
          board: 'kr260',
          assets_dir: '/boot/firmware/xlnx-config/kr260-ros2/hwconfig/perception/kr260',
        },
      ],
      active: null,
    });
  });

  it.each(['query-no-pacs-title-only.txt', 'query-no-pacs-empty-table.txt', 'query-no-pacs-message.txt'])(
    'answers an empty list when there are no PACs (%s)',
    (file) => {
      expect(parseXlnxConfigQuery(sample(file))).toEqual({ pacs: [], active: null });
    },
  );

  it('tolerates CRLF line ends and colour codes', () => {
    const text = sample('query-one-active.txt').replace(/\n/g, '\r\n').replace('| * |', '| \x1b[1;32m*\x1b[0m |');
    expect(parseXlnxConfigQuery(text).active).toBe('zcu104-platform-cfg1');
  });

  it.each([
    ['a usage message', sample('query-unrecognised-usage.txt')],
    ['nothing at all', ''],
    ['a Python traceback', 'Traceback (most recent call last):\n  File "xlnx-config", line 1\nKeyError: \'board\'\n'],
    [
      'a row with a strange Act mark',
      sample('query-one-active.txt').replace('| * |', '| X |'),
    ],
    ['a row with two columns', sample('query-one-active.txt').replace('| * |', '')],
  ])('throws a typed error on %s', (_what, text) => {
    let caught: unknown;
    try {
      parseXlnxConfigQuery(text);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(XlnxConfigError);
    expect((caught as XlnxConfigError).code).toBe('xlnx_config_output_unrecognised');
    expect((caught as XlnxConfigError).output).toBe(text);
  });
});

import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * /etc/vart.conf names the xclbin VART opens: `firmware: /lib/firmware/xilinx/<app>/<x>.xclbin`.
 * dfx-mgrd rewrites it when it loads an XRT_FLAT app that holds an xclbin.
 */
export function parseVartConf(text: string): string | undefined {
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*firmware\s*:\s*(\S.*?)\s*$/.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

/** The `firmware:` target of `<hostRoot>/etc/vart.conf`, or undefined when there is none. */
export async function readVartTarget(hostRoot: string): Promise<string | undefined> {
  try {
    const text = await fsp.readFile(path.join(hostRoot, 'etc/vart.conf'), 'utf8');
    return parseVartConf(text.slice(0, 64 * 1024));
  } catch {
    return undefined;
  }
}

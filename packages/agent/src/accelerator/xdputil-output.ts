import type { DpuFacts } from '@mm/protocol';

/**
 * `xdputil query` prints one JSON object (glog lines may come first, on stderr or stdout):
 *
 *   { "DPU IP Spec": { "DPU Core Count": 1, "IP version": "v4.1.0", ... },
 *     "VAI Version": { "libvart-runner.so": "Xilinx vart-runner Version: 2.5.0-…",
 *                      "target_factory": "target-factory.2.5.0 <hash>", ... },
 *     "kernels": [ { "DPU Arch": "DPUCZDX8G_ISA1_B4096", "DPU Frequency (MHz)": 300,
 *                    "IP Type": "DPU", "cu_idx": 0, "fingerprint": "0x101000016010407",
 *                    "name": "DPU Core 0", ... }, { "IP Type": "SFM", ... } ] }
 *
 * Kernels that are not a DPU (a softmax core) have no fingerprint or an empty arch.
 */

export interface DpuQuery {
  dpu: DpuFacts | undefined;
  vaiVersion: string | undefined;
}

export class DpuQueryUnrecognised extends Error {}

/** A fingerprint as the tools print it, normalised (`0x` + lowercase hex, no leading zeros); undefined if it is none. */
export function normaliseFingerprint(value: unknown): string | undefined {
  let n: bigint;
  try {
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) n = BigInt(value);
    else if (typeof value === 'string' && /^\s*(0x[0-9a-f]{1,16}|\d{1,20})\s*$/i.test(value)) n = BigInt(value.trim());
    else return undefined;
  } catch {
    return undefined;
  }
  if (n <= 0n || n >= 1n << 64n) return undefined;
  return `0x${n.toString(16)}`;
}

/** Parses the query's JSON; throws DpuQueryUnrecognised when there is none. */
export function parseXdputilQuery(output: string): DpuQuery {
  const start = output.indexOf('{');
  const end = output.lastIndexOf('}');
  if (start < 0 || end < start) throw new DpuQueryUnrecognised('xdputil printed no JSON');
  let doc: unknown;
  try {
    doc = JSON.parse(output.slice(start, end + 1));
  } catch (err) {
    throw new DpuQueryUnrecognised(`xdputil printed JSON that does not parse: ${(err as Error).message}`);
  }
  if (!isObject(doc)) throw new DpuQueryUnrecognised('xdputil printed no JSON object');
  const kernels = (Array.isArray(doc.kernels) ? doc.kernels : []).filter(isObject);
  const dpus = kernels
    .map((k) => ({ arch: typeof k['DPU Arch'] === 'string' ? k['DPU Arch'].trim() : '', fingerprint: normaliseFingerprint(k.fingerprint), frequency: k['DPU Frequency (MHz)'], type: k['IP Type'] }))
    .filter((k) => k.fingerprint !== undefined && (k.type === undefined || k.type === 'DPU'));
  const first = dpus[0];
  const dpu: DpuFacts | undefined = first
    ? {
        arch: first.arch || 'unknown',
        fingerprint: first.fingerprint!,
        ...(typeof first.frequency === 'number' && Number.isFinite(first.frequency) && first.frequency >= 0 ? { frequency_mhz: first.frequency } : {}),
        cores: dpus.length,
      }
    : undefined;
  return { dpu, vaiVersion: vaiVersionOf(doc['VAI Version']) };
}

/** `target-factory.2.5.0 <hash>` or `... vart-runner Version: 2.5.0-<hash> ...` → `2.5.0`. */
function vaiVersionOf(section: unknown): string | undefined {
  if (!isObject(section)) return undefined;
  const candidates = [section.target_factory, section['libvart-runner.so'], ...Object.values(section)];
  for (const text of candidates) {
    if (typeof text !== 'string') continue;
    const m = /(?:target-factory\.|Version:\s*(?:xir-)?)(\d+\.\d+(?:\.\d+)?)/.exec(text);
    if (m) return m[1];
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

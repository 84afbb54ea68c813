import fs from 'node:fs';
import os from 'node:os';
import { AGENT_VERSION } from '../version.ts';

/** Node's arch names as Debian calls them (the package architectures). */
export function debianArch(arch: string = process.arch): string {
  return ({ x64: 'amd64', arm64: 'arm64', arm: 'armhf', ia32: 'i386' } as Record<string, string>)[arch] ?? arch;
}

function osName(): string {
  try {
    const release = fs.readFileSync('/etc/os-release', 'utf8');
    const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(release);
    if (pretty?.[1]) return pretty[1];
  } catch {
    // no os-release: the kernel's name will do
  }
  return `${os.type()} ${os.release()}`;
}

/** What the agent tells the control plane about the board when it enrolls. */
export function boardFacts(): Record<string, unknown> {
  return {
    arch: debianArch(),
    os: osName(),
    kernel: os.release(),
    cpu_count: os.cpus().length,
    memory_bytes: os.totalmem(),
    agent_version: AGENT_VERSION,
    node_version: process.versions.node,
  };
}

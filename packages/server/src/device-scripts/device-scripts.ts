import type { StoreContext } from '../store-context.ts';
import {
  attachScriptProgram,
  boardScriptsOf,
  deployedPort,
  requireDeployable,
  scriptDeployments,
  scriptProgramOf,
  scriptPrograms,
  type BoardScriptRecord,
  type ScriptProgram,
} from './device-script-programs.ts';
import type { DeviceScriptChanges, DeviceScriptFields, DeviceScriptRecord } from './device-scripts-schema.ts';
import { createDeviceScript, deleteDeviceScript, getDeviceScript, listDeviceScripts, updateDeviceScript } from './script-catalogue.ts';

/**
 * Device scripts as the routes use them (docs/device-scripts.md): the catalogue, each
 * version's program, and where each script is deployed as the boards report it. Every
 * lookup by id answers the resource's 404 for an unknown (or malformed) id.
 */
export class DeviceScripts {
  constructor(private readonly store: StoreContext) {}

  private get db() {
    return this.store.database.db;
  }

  // ── the catalogue ──

  list(query: { deviceType?: string | undefined; limit: number; offset: number }): Promise<{ scripts: DeviceScriptRecord[]; total: number }> {
    return listDeviceScripts(this.db, query);
  }

  /** The entry; 404 `device_script_not_found`. */
  get(id: string): Promise<DeviceScriptRecord> {
    return getDeviceScript(this.db, id);
  }

  create(fields: DeviceScriptFields): Promise<DeviceScriptRecord> {
    return createDeviceScript(this.db, fields);
  }

  /** Sets the fields given (all of them for PUT) and moves `updated_at`. */
  update(id: string, changes: DeviceScriptChanges): Promise<DeviceScriptRecord> {
    return updateDeviceScript(this.db, id, changes);
  }

  delete(id: string): Promise<void> {
    return deleteDeviceScript(this.db, id);
  }

  // ── programs ──

  /** Records stored (and pinned) content as the program of the entry's current version; ends the pin. */
  attachProgram(id: string, file: { filename: string; sha256: string; size: number }): Promise<ScriptProgram> {
    return attachScriptProgram(this.store, id, file);
  }

  /** The program of `version` (default: the entry's current one), or undefined. */
  program(id: string, version?: string): Promise<ScriptProgram | undefined> {
    return scriptProgramOf(this.db, id, version);
  }

  /** Every version's program, oldest upload first. */
  programs(id: string): Promise<ScriptProgram[]> {
    return scriptPrograms(this.db, id);
  }

  /** The entry, when it can be deployed: a folder the board may write and a program for its version (else 400/404). */
  requireDeployable(id: string): Promise<DeviceScriptRecord> {
    return requireDeployable(this.db, id);
  }

  // ── on the boards ──

  /** Every board that reports the script, with its version and state. */
  deployments(id: string): Promise<BoardScriptRecord[]> {
    return scriptDeployments(this.db, id);
  }

  /** The scripts one board reports, by name. */
  onBoard(boardId: string): Promise<BoardScriptRecord[]> {
    return boardScriptsOf(this.db, boardId);
  }

  /** The port the board reported for the script, or undefined where it is not deployed. */
  deployedPort(boardId: string, id: string): Promise<number | undefined> {
    return deployedPort(this.db, boardId, id);
  }
}

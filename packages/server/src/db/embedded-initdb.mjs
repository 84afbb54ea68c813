// Creates a new embedded database folder (PGlite's initdb) and exits: `node embedded-initdb.mjs DIR`.
//
// Plain JavaScript run in a child process by database.ts, not imported: initdb runs a second
// PGlite and the initdb WebAssembly module beside the database being made, and the server
// process that did this kept ~500 MB more resident memory for as long as it ran (the WebAssembly
// memories are freed only by a major GC that an idle server may never do, and then malloc keeps
// the pages). Done here, all of it goes back to the system when this process exits.
import v8 from 'node:v8';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: embedded-initdb.mjs DIR');
  process.exit(2);
}
// Liftoff only, as database.ts does for the server (see loadPGlite there): less to compile.
v8.setFlagsFromString('--liftoff-only');
const { PGlite } = await import('@electric-sql/pglite');
const pg = new PGlite(dir);
await pg.waitReady;
await pg.close();

import { main } from './program.ts';

// `mm … | head`: a closed pipe ends the client quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

// Let pending output drain; exit with the code (open sockets must not keep the process alive).
const code = await main(process.argv.slice(2));
process.exitCode = code;
setTimeout(() => process.exit(code), 50).unref();

export { startServer, type RunningServer, type StartServerOptions } from './server.ts';
export { loadConfig, type Config, ConfigError } from './config.ts';
export { openDatabase, migrationsFolder, createEmbeddedSeed } from './db/database.ts';

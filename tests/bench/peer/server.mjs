// The Node.js peer of the query service: GET /v1/networks, /v1/history and /v1/history/hash on
// the project's own schema, answering byte for byte as the project does, for scripts/bench to
// measure beside it. One process per core (node:cluster), each with its own mysql2 pool
// (prepared statements through execute()), served behind nginx with upstream keep-alive
// (nginx.conf.in).
//
// Usage: node server.mjs [--listen HOST:PORT | --listen /path/to.sock]
// Environment (the flag wins over PEER_LISTEN):
//   PEER_LISTEN          127.0.0.1:PORT or a unix socket path (default 127.0.0.1:3000)
//   PEER_WORKERS         processes (default: one per core)
//   PEER_DB_SOCKET       MariaDB unix socket (else PEER_DB_HOST, PEER_DB_PORT: 127.0.0.1:3306)
//   PEER_DB_NAME, PEER_DB_USER, PEER_DB_PASSWORD   (connector, connector, connector-dev)
//   PEER_DB_CONNECTIONS  connections per process (default 16)
import cluster from 'node:cluster';
import { existsSync, unlinkSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';

import mysql from 'mysql2/promise';

import { buildApp } from './lib/app.mjs';
import { Reference } from './lib/reference.mjs';

const env = process.env;
const { values: flags } = parseArgs({ options: { listen: { type: 'string' } } });
const listen = flags.listen || env.PEER_LISTEN || '127.0.0.1:3000';
const isSocket = listen.includes('/');

if (cluster.isPrimary) {
  const workers = Number(env.PEER_WORKERS) || availableParallelism();
  if (isSocket && existsSync(listen)) unlinkSync(listen);
  let stopping = false;
  let listening = 0;
  for (let i = 0; i < workers; i++) cluster.fork();
  cluster.on('listening', (worker) => {
    worker.listened = true;
    if (++listening === workers) console.log(`peer: ${workers} processes on ${listen}`);
  });
  // A process that dies while serving is replaced; one that dies before it could listen (no
  // database, bad settings) would only die again: then the whole peer stops.
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (!worker.listened) {
      console.error(`peer: worker ${worker.process.pid} failed to start (${signal || code})`);
      stopping = true;
      for (const other of Object.values(cluster.workers)) other.process.kill('SIGTERM');
      process.exitCode = 1;
      return;
    }
    console.error(`peer: worker ${worker.process.pid} exited (${signal || code}); starting another`);
    cluster.fork();
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 5000).unref();
    cluster.disconnect(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  const pool = mysql.createPool({
    ...(env.PEER_DB_SOCKET
      ? { socketPath: env.PEER_DB_SOCKET }
      : { host: env.PEER_DB_HOST || '127.0.0.1', port: Number(env.PEER_DB_PORT) || 3306 }),
    database: env.PEER_DB_NAME || 'connector',
    user: env.PEER_DB_USER || 'connector',
    password: env.PEER_DB_PASSWORD ?? 'connector-dev',
    connectionLimit: Number(env.PEER_DB_CONNECTIONS) || 16,
    // BIGINT UNSIGNED ids, heights and timestamps come as their exact digits.
    supportBigNumbers: true,
    bigNumberStrings: true,
    charset: 'utf8mb4',
  });
  const reference = new Reference(pool);
  await reference.load();
  reference.start();
  const app = buildApp(pool, reference);
  if (isSocket) {
    await app.listen({ path: listen });
  } else {
    const colon = listen.lastIndexOf(':');
    await app.listen({ host: listen.slice(0, colon), port: Number(listen.slice(colon + 1)) });
  }
  process.on('SIGTERM', async () => {
    await app.close();
    await pool.end();
    process.exit(0);
  });
}

#!/usr/bin/env node
// The stand-in as a process: node stand-in/cli.mjs [--port N] [--host H] [--key K] [--demo] [--verbose]
// prints `mock-api listening on <url>` and serves until SIGINT or SIGTERM.

import { startMockApi } from './server.mjs';
import { demoModel } from './demo-model.mjs';

async function main(argv) {
  const options = { apiKey: 'sk-ant-local-stand-in', host: '127.0.0.1', port: 0, logLevel: 'silent' };
  let demo = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--port') options.port = Number(argv[++i]);
    else if (arg === '--key') options.apiKey = argv[++i];
    else if (arg === '--host') options.host = argv[++i];
    else if (arg === '--demo') demo = true;
    else if (arg === '--verbose') options.logLevel = 'info';
    else {
      process.stderr.write(`mock-api: unknown argument ${arg}\nusage: node stand-in/cli.mjs [--port N] [--host H] [--key K] [--demo] [--verbose]\n`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    process.stderr.write('mock-api: --port needs a number between 0 and 65535\n');
    process.exit(2);
  }
  const api = await startMockApi({ ...options, handler: demo ? demoModel : null });
  process.stdout.write(`mock-api listening on ${api.url}\n`);
  const stop = async () => {
    await api.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`mock-api: ${err?.stack ?? err}\n`);
  process.exit(1);
});

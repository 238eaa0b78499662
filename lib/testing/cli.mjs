#!/usr/bin/env node
// `npx anthropic-tool-calling stand-in`: the test kit's strict stand-in as a process, for an app
// in development (`next dev`) to talk to instead of the API. It serves until Ctrl-C.

import { parseArgs } from 'node:util'
import { demoModel } from '../../stand-in/demo-model.mjs'
import { serve } from './stand-in.mjs'

const USAGE = `usage: npx anthropic-tool-calling stand-in [--port 4010] [--host 127.0.0.1] [--key sk-ant-local-stand-in] [--demo] [--verbose]

Serves a strict local stand-in of the Anthropic Messages API. Point your app at it with
  ANTHROPIC_BASE_URL=http://<host>:<port>
  ANTHROPIC_API_KEY=<key>
Its model calls the offered tools a prompt names, then says what they returned; with --demo it is
the order assistant of the package's examples (order numbers, returns, shipping estimates).
--verbose logs each request to stderr.`

function fail(message) {
  process.stderr.write(`anthropic-tool-calling: ${message}\n${USAGE}\n`)
  process.exit(2)
}

async function main(argv) {
  const [command, ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') return void process.stdout.write(`${USAGE}\n`)
  if (command !== 'stand-in') fail(command === undefined ? 'name a command' : `unknown command ${command}`)
  let values
  try {
    ;({ values } = parseArgs({
      args: rest,
      options: {
        port: { type: 'string', default: '4010' },
        host: { type: 'string', default: '127.0.0.1' },
        key: { type: 'string', default: 'sk-ant-local-stand-in' },
        demo: { type: 'boolean', default: false },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }))
  } catch (err) {
    fail(err.message)
  }
  if (values.help) return void process.stdout.write(`${USAGE}\n`)
  const port = Number(values.port)
  if (!/^\d+$/.test(values.port) || port > 65535) fail(`--port needs a number from 0 to 65535, got ${values.port}`)
  if (values.key.length < 8) fail('--key needs 8 characters or more (a shorter one would be redacted out of every message)')
  const standIn = await serve({ apiKey: values.key, host: values.host, port, model: values.demo ? demoModel : undefined, logLevel: values.verbose ? 'info' : 'silent' })
  process.stdout.write(`anthropic-tool-calling stand-in listening on ${standIn.url}\n  ANTHROPIC_BASE_URL=${standIn.url}\n  ANTHROPIC_API_KEY=${standIn.apiKey}\n`)
  const stop = async () => {
    await standIn.close()
    process.exit(0)
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`anthropic-tool-calling: ${err?.code === 'EADDRINUSE' ? `${err.message}: another process holds that port; pick another with --port` : err?.stack ?? err}\n`)
  process.exit(1)
})

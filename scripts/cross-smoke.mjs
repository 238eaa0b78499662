// One conversation with a tool through an addon built for another architecture, run by that
// architecture's node under an emulator (scripts/cross-build.sh --qemu):
//
//   node scripts/cross-smoke.mjs <dir with index.js, binding.js and the .node> <command…>
//
// The stand-in API (stand-in/) runs here, on 127.0.0.1; `command… -e <script>` runs
// in <dir>, registers a tool, calls runWithTools against it and prints what it got.
import { spawn } from 'node:child_process'
import { startMockApi, reply, toolUse, text } from '../stand-in/index.mjs'

const [dir, ...command] = process.argv.slice(2)
if (!dir || command.length === 0) {
  console.error('usage: node scripts/cross-smoke.mjs <dir> <command…>')
  process.exit(2)
}

const apiKey = 'sk-ant-cross-smoke'
const api = await startMockApi({ apiKey })
api.script(reply([toolUse('get_order_status', { orderId: 'A1' }, 'toolu_1')]), reply([text('Order A1 has shipped.')]))

const script = `
const { registerTool, runWithTools } = require('./index.js')
registerTool({
  definition: { name: 'get_order_status', input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] } },
  execute: ({ orderId }) => ({ orderId, status: 'shipped' }),
})
runWithTools('Status of order A1?', { apiKey: ${JSON.stringify(apiKey)}, baseURL: ${JSON.stringify(api.url)} }).then((r) => {
  console.log(JSON.stringify({ arch: process.arch, node: process.version, error: r.error, text: r.data && r.data.text, toolCalls: r.data && r.data.toolCalls.map((c) => [c.toolName, c.output]) }))
})`

const child = spawn(command[0], [...command.slice(1), '-e', script], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] })
let out = ''
child.stdout.on('data', (chunk) => (out += chunk))
const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
const code = await new Promise((resolve) => child.on('close', resolve))
clearTimeout(timer)
await api.close()

let result
try {
  result = JSON.parse(out.trim().split('\n').pop())
} catch {
  console.error(`  no result (exit ${code}): ${out}`)
  process.exit(1)
}
console.log(`  ${result.node} ${result.arch}: ${JSON.stringify(result)}`)
const ok =
  result.error === null &&
  result.text === 'Order A1 has shipped.' &&
  JSON.stringify(result.toolCalls) === JSON.stringify([['get_order_status', { orderId: 'A1', status: 'shipped' }]]) &&
  api.requests.length === 2
process.exit(ok ? 0 : 1)

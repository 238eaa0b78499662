// Type fixture for anthropic-tool-calling/testing from ESM (lib/testing/index.d.ts), checked with
// fixture.mts by `tsc -p __test__/types`.
import { runWithTools } from 'anthropic-tool-calling'
import kit, {
  startStandIn, text, toolUse, thinking, message, pauseTurn, rateLimited, overloaded, serverError, cutStream, slow,
  type Reply, type StandIn, type StandInRequest,
} from 'anthropic-tool-calling/testing'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function expect<T extends true>(): void {}

export async function scripted(): Promise<void> {
  const s: StandIn = await startStandIn({
    replies: [
      message([thinking('why'), toolUse('get_weather', { city: 'Oslo' })]),
      text('Sunny.'),
      'plain string',
      [text('a'), 'b'],
      pauseTurn(),
      rateLimited(1),
      overloaded(),
      serverError(),
      cutStream(text('x')),
      slow(50, 'late'),
      message('cut', 'max_tokens'),
    ],
  })
  const r = await runWithTools('hi', { apiKey: s.apiKey, baseURL: s.url })
  expect<Equal<typeof s.url, string>>()
  const first = s.requests[0]
  if (first) expect<Equal<typeof first.max_tokens, number>>()
  await s.close()
  void r
}

export async function byFunction(): Promise<void> {
  const s = await startStandIn({ replies: async (request: StandInRequest) => (request.messages.length > 1 ? 'done' : toolUse('x')), port: 0 })
  await s.close()
  await kit.startStandIn()
}

const reply: Reply = cutStream(slow(10, text('y')))
void reply
// @ts-expect-error replies is a list or a function
startStandIn({ replies: 'not a list' })
// @ts-expect-error not an option
startStandIn({ reply: [] })
// @ts-expect-error a number of seconds
rateLimited('10')
// @ts-expect-error a reply, not a number
slow(10, 42)

// Type fixture for anthropic-tool-calling/testing from CommonJS: the same declarations.
import { startStandIn, text, toolUse, type StandIn } from 'anthropic-tool-calling/testing'

export async function cjs(): Promise<string> {
  const s: StandIn = await startStandIn({ replies: [toolUse('get_weather', { city: 'Oslo' }), text('Sunny.')] })
  await s.close()
  return s.apiKey
}
// @ts-expect-error a text block needs its text
text()

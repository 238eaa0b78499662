// ESM entry of the test kit: the same module instance as the CommonJS one.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const kit = require('./index.js')

export const { startStandIn, text, toolUse, thinking, message, pauseTurn, rateLimited, overloaded, serverError, cutStream, slow } = kit
export default kit

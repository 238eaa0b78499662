'use strict'
// StreamParts turned into the chunks of the AI SDK's UI message stream protocol (what `useChat`
// reads), and what that stream tells the browser: its headers, its finish reasons, and the fixed
// sentences it shows for a failed run.

const { asText } = require('../ui-messages.js')

/** The headers the AI SDK sends with a UI message stream. */
const UI_MESSAGE_STREAM_HEADERS = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
})

/** What the browser is told when a run fails: fixed sentences, never the developer's message. */
const USER_ERROR_TEXT = Object.freeze({
  invalid_request: 'The request could not be processed.',
  authentication_error: 'The assistant is not available right now because of a configuration problem.',
  rate_limited: 'Too many requests right now. Please wait a moment and try again.',
  overloaded: 'The assistant is overloaded right now. Please try again in a moment.',
  network_error: 'The assistant could not be reached. Please try again.',
  tool_validation_error: 'A tool could not accept what it was given, so the reply stopped. Please try again.',
  tool_execution_error: 'A tool failed while the reply was being prepared. Please try again.',
  max_iterations_exceeded: 'The request needed more steps than allowed. Please try a simpler request.',
  output_truncated: 'The reply was too long and was cut off. Please try a shorter request.',
  aborted: 'The reply was stopped.',
  budget_exceeded: 'This request needed more work than allowed. Please try a simpler request.',
  output_validation_error: 'The reply did not come out in the expected form. Please try again.',
  unknown_error: 'Something went wrong. Please try again.',
  store_unavailable: 'The conversation could not be saved right now. Please try again in a moment.',
  thread_busy: 'This conversation is still answering. Please wait for it to finish.',
})

/** The API's stop reasons as the AI SDK's finish reasons. */
const FINISH_REASON = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool-calls',
  approval_required: 'tool-calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content-filter',
}

/**
 * Turns StreamParts into UI message chunks. The parts have no block boundaries, so an open
 * text or reasoning part is ended when anything else comes; text that resumes gets a new id.
 */
class UIChunker {
  #onError
  #messageId
  #sendReasoning
  /** The open text or reasoning part: { kind: 'text' | 'reasoning', id }. */
  #open = null
  #lastId = 0
  /** Per toolUseId: { toolName, inputText, available, settled }. */
  #calls = new Map()
  #started = false
  /** A step was started and not finished. */
  #inStep = false
  /** The steps the stream started (`start-step` chunks): the engine's step numbers count them. */
  #steps = 0
  /** The calls announced in the step in progress (what a `reset-step` takes away). */
  #stepCalls = new Set()
  /** Taken over (`continueAfter`): the next part is the first the new holder of the run writes. */
  #cut = false

  constructor({ onError, messageId, sendReasoning }) {
    this.#onError = onError
    this.#messageId = messageId
    this.#sendReasoning = sendReasoning
  }

  start() {
    return []
  }

  /**
   * A run taken over (resumeRun, recoverRuns) records on after what its stream sent (`sse`, the
   * committed slices): the state it left is read back, and the parts written next mend what the
   * cut left open, by the engine's step numbers (the stream's `start-step` chunks count the
   * steps). The take-over's first step is the one the stream left open when its reply was cut
   * before it was committed: that step's parts so far are taken back (`reset-step`: the AI SDK
   * removes what the current step added) and it goes on. A later one means the open step was
   * committed (only its `finish-step` had not reached the stream): it is closed and kept. A
   * round taken over tells its calls and its `finish-step` again: calls already announced or
   * answered, and a step already finished, are not sent twice.
   */
  continueAfter(sse) {
    this.#started = true
    this.#cut = true
    for (const line of sse.split('\n')) {
      if (!line.startsWith('data: {')) continue
      let chunk
      try {
        chunk = JSON.parse(line.slice(6))
      } catch {
        continue
      }
      this.#replayed(chunk)
    }
  }

  #replayed(chunk) {
    const call = this.#calls.get(chunk.toolCallId)
    switch (chunk.type) {
      case 'start-step':
        this.#inStep = true
        this.#steps++
        this.#stepCalls.clear()
        return
      case 'finish-step':
        this.#inStep = false
        this.#open = null
        return
      case 'reset-step':
        this.#resetStep()
        return
      case 'text-start':
      case 'reasoning-start': {
        this.#open = { kind: chunk.type.slice(0, -'-start'.length), id: chunk.id }
        const n = Number(/-(\d+)$/.exec(chunk.id)?.[1])
        if (n > this.#lastId) this.#lastId = n
        return
      }
      case 'text-end':
      case 'reasoning-end':
        if (this.#open !== null && this.#open.id === chunk.id) this.#open = null
        return
      case 'tool-input-start':
        this.#calls.set(chunk.toolCallId, { toolName: chunk.toolName, inputText: '', available: false, settled: false })
        this.#stepCalls.add(chunk.toolCallId)
        return
      case 'tool-input-delta':
        if (call !== undefined) call.inputText += chunk.inputTextDelta
        return
      case 'tool-input-available':
        this.#calls.set(chunk.toolCallId, { ...(call || { inputText: '' }), toolName: chunk.toolName, available: true, settled: false })
        this.#stepCalls.add(chunk.toolCallId)
        return
      case 'tool-output-available':
      case 'tool-output-error':
      case 'tool-output-denied':
        if (call !== undefined) call.settled = true
        return
      default:
    }
  }

  /** What a `reset-step` takes back: the step's open part and the calls it announced. */
  #resetStep() {
    this.#open = null
    for (const id of this.#stepCalls) this.#calls.delete(id)
    this.#stepCalls.clear()
  }

  /**
   * A part of a take-over before its first step begins: what the cut left open is mended (see
   * continueAfter). Whether the part is written on as usual.
   */
  #mend(part, out) {
    if (part.type === 'finish-step') return this.#inStep
    if (part.type !== 'start-step') {
      this.#close(out)
      return true
    }
    this.#cut = false
    if (!this.#inStep) return true
    if (part.step === this.#steps - 1) {
      // The step that was cut is asked for again: it goes on, without a second start.
      out.push({ type: 'reset-step' })
      this.#resetStep()
      return false
    }
    this.#close(out)
    this.#inStep = false
    out.push({ type: 'finish-step' })
    return true
  }

  /**
   * The `start` chunk goes out with the run's first part: a durable run's first `start-step`
   * carries its id, which the chunk gives as `messageMetadata.runId` (for `resumeStream` and
   * `stopRun`).
   */
  #begin(part, out) {
    this.#started = true
    const chunk = { type: 'start' }
    if (this.#messageId !== undefined) chunk.messageId = this.#messageId
    if (part.type === 'start-step' && typeof part.runId === 'string') chunk.messageMetadata = { runId: part.runId }
    out.push(chunk)
  }

  write(part, out) {
    if (!this.#started) this.#begin(part, out)
    if (this.#cut && !this.#mend(part, out)) return
    switch (part.type) {
      case 'start-step':
        this.#close(out)
        this.#inStep = true
        this.#steps++
        this.#stepCalls.clear()
        out.push({ type: 'start-step' })
        return
      case 'text-delta':
        if (part.text === '') return
        this.#openAs('text', out)
        out.push({ type: 'text-delta', id: this.#open.id, delta: part.text })
        return
      case 'reasoning-delta':
        if (!this.#sendReasoning || part.text === '') return
        this.#openAs('reasoning', out)
        out.push({ type: 'reasoning-delta', id: this.#open.id, delta: part.text })
        return
      case 'tool-input-start':
        this.#close(out)
        this.#calls.set(part.toolUseId, { toolName: part.toolName, inputText: '', available: false, settled: false })
        this.#stepCalls.add(part.toolUseId)
        out.push({ type: 'tool-input-start', toolCallId: part.toolUseId, toolName: part.toolName })
        return
      case 'tool-input-delta': {
        const call = this.#calls.get(part.toolUseId)
        // A delta for a call that was never started would make useChat throw; it has no toolName to start it with.
        if (call === undefined || call.available) return
        call.inputText += part.delta
        out.push({ type: 'tool-input-delta', toolCallId: part.toolUseId, inputTextDelta: part.delta })
        return
      }
      case 'tool-call':
        this.#close(out)
        // A round taken over tells its calls again: one already announced is not sent twice.
        if (this.#calls.get(part.toolUseId)?.available) return
        this.#available(part.toolUseId, part.toolName, part.input, out)
        return
      case 'tool-result': {
        this.#close(out)
        const call = this.#calls.get(part.toolUseId)
        if (call !== undefined && call.settled) return
        this.#ensureAvailable(part.toolUseId, part.toolName, out)
        this.#calls.get(part.toolUseId).settled = true
        if (part.declined) {
          // The person said no: the AI SDK's own state for it, not a failure.
          out.push({ type: 'tool-output-denied', toolCallId: part.toolUseId })
        } else if (part.isError) {
          // The model-facing text; `part.error` is the developer's and never leaves the server.
          out.push({ type: 'tool-output-error', toolCallId: part.toolUseId, errorText: asText(part.output) })
        } else {
          out.push({ type: 'tool-output-available', toolCallId: part.toolUseId, output: part.output === undefined ? null : part.output })
        }
        return
      }
      case 'finish-step':
        this.#close(out)
        this.#inStep = false
        out.push({ type: 'finish-step' })
        return
      case 'finish':
        this.#close(out)
        this.#finish(part.result, out)
        return
      default:
      // A part type this version does not know: nothing to show for it.
    }
  }

  #finish(result, out) {
    const error = result && result.error
    if (error) {
      if (error.code === 'aborted') {
        out.push({ type: 'abort' })
        return
      }
      out.push({ type: 'error', errorText: this.#errorText(error) })
      out.push({ type: 'finish', finishReason: 'error' })
      return
    }
    const data = (result && result.data) || {}
    for (const pending of data.pendingApprovals || []) {
      this.#ensureAvailable(pending.toolUseId, pending.toolName, out, pending.input)
      out.push({ type: 'tool-approval-request', approvalId: pending.approvalId, toolCallId: pending.toolUseId })
    }
    out.push({ type: 'finish', finishReason: FINISH_REASON[data.stopReason] || 'other' })
  }

  #errorText(error) {
    if (this.#onError) {
      try {
        const text = this.#onError(error)
        if (typeof text === 'string') return text
      } catch {
        // Fall back to the fixed sentence: a failing hook must not leak anything or break the stream.
      }
    }
    return USER_ERROR_TEXT[error.code] || USER_ERROR_TEXT.unknown_error
  }

  #available(toolUseId, toolName, input, out) {
    const call = this.#calls.get(toolUseId) || { toolName, inputText: '', available: false, settled: false }
    call.available = true
    this.#calls.set(toolUseId, call)
    this.#stepCalls.add(toolUseId)
    out.push({ type: 'tool-input-available', toolCallId: toolUseId, toolName, input: input === undefined ? {} : input })
  }

  /** A result or approval for a call whose input was never announced: announce it first. */
  #ensureAvailable(toolUseId, toolName, out, input) {
    const call = this.#calls.get(toolUseId)
    if (call !== undefined && call.available) return
    if (input === undefined) input = parseInput(call ? call.inputText : '')
    this.#available(toolUseId, toolName, input, out)
  }

  #openAs(kind, out) {
    if (this.#open !== null && this.#open.kind === kind) return
    this.#close(out)
    this.#open = { kind, id: `${kind}-${++this.#lastId}` }
    out.push({ type: `${kind}-start`, id: this.#open.id })
  }

  #close(out) {
    if (this.#open === null) return
    out.push({ type: `${this.#open.kind}-end`, id: this.#open.id })
    this.#open = null
  }
}

/** The input the model wrote, from its streamed JSON; `{}` when there was none (as the API has it). */
function parseInput(text) {
  if (text === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    return {}
  }
}

module.exports = { UIChunker, UI_MESSAGE_STREAM_HEADERS, USER_ERROR_TEXT }

// A strict local stand-in of the Anthropic Messages API (`POST /v1/messages`), for the node:test
// suites, `npm run demo` and the benchmark. Plain Node ESM, `node:` built-ins only.
//
// It is exactly as strict as the real API: a request the real API would refuse (bad auth,
// headers, fields, tools, tool_use/tool_result pairing, empty messages, thinking blocks changed or
// missing, server tool blocks out of place) gets the same 4xx and message here, so a looser test
// server never hides a bug in the engine. It speaks the API versions 2023-06-01 and 2026-10-21
// (`anthropic-version`; any other is the API's 400), each with its rules: under 2026-10-21
// `temperature`, `top_p` and `top_k` are "Extra inputs", a `document` directly in an assistant
// message and a text block with non-empty `citations` anywhere in a user message are refused
// (rules/versions.mjs; the wording of the last two is ours, in the API's style).
//
//   const api = await startMockApi({ apiKey: 'sk-ant-test-key' });
//   api.script(reply([toolUse('get_order_status', { orderId: '4821' })]), reply([text('Shipped.')]));
//   ... point the client at api.url ...
//   await api.close();
//
// Builders (each returns a plain block or step; use them in `api.script(...)`):
//   text(s, citations?)                   text block; `citations` added when given
//   toolUse(name, input, id?)             tool_use, id `toolu_…` unless given
//   thinking(text, signature?)            thinking block; without `signature` a valid one (signThinking(text))
//   redactedThinking(data?)               redacted_thinking with valid signed data (valid `data` kept, else signed)
//   serverToolUse(name, input, id?)       server_tool_use, id `srvtoolu_…` unless given
//   webSearchResult(toolUseId, results?)  web_search_tool_result; results [{ url, title, encrypted_content?, page_age? }]
//   mcpToolUse(server, name, input, id?)  mcp_tool_use (an MCP connector call), id `mcptoolu_…` unless given
//   mcpToolResult(toolUseId, content, isError?)  its mcp_tool_result; content a string (one text block) or text blocks
//   compaction(content, encrypted?, extra?)  compaction block (content null: a failed compaction)
//   toolAddition(name), toolRemoval(name)  tool change blocks, the content of a `system` message
//   reply(content, { stop_reason?, usage?, model?, stop_sequence?, container?, stop_details?, context_management? })
//       a 200 reply step; stop_reason defaults to tool_use/end_turn; `container` ({ id, expires_at }),
//       `stop_details` and `context_management` go on the message only when given; usage defaults
//       to 10 in / 5 out and may hold `iterations`. A scripted compaction block, stop_reason
//       'compaction', iterations and context_management are sent as given.
//   signThinking(text), sseEvents(message, { unknownDelta? }), echoed(text, headers),
//   estimateInputTokens(body) (the long-loop simulation's count, below),
//   CONTAINER_REQUIRED (the API's text), demoModel(body) (a tiny rule-based model for the demo),
//   defaultModel(body) (the test kit's model: it calls the offered tools the prompt names)
//   structuredAnswer(schema, facts?, prose?)  a value matching a structured-output schema, from
//       facts where they fit (structured.mjs); script it as reply(JSON.stringify(…))
//   schemaMismatch(schema, value)         why value does not match the schema (null: it does)
//   FORMAT_MISMATCH                       how the 500 for a final answer that misses the format starts
//
// Steps (`api.script(step, …)`, or returned by `api.handler(body, record)` / a function step):
//   reply(…)                              the message; streamed as SSE when the request has `stream: true`
//   { ...reply(…), requireContainer: 'cont_…' }  the request must carry `container: 'cont_…'`, else 400
//   { ...reply(…), ignoresFormat: true }  sent even when it breaks the request's format (below)
//   { ...reply(…), id: 'msg_…' }          the message goes out with this id (else a fresh `msg_…`)
//   { status, error?: { type, message, details? }, headers? }   an API error (3xx: an empty body with
//                                         `headers`, e.g. { status: 307, headers: { location } }); `details`
//                                         ({ error_code, … }) is sent as the body's error.details
//   { status?, body, headers? }           any JSON body as given
//   { fault: 'reset' | 'hang' | 'html' | 'badjson' | 'wrong-shape' | 'truncated' | 'stall-body' | 'huge' }
//   { fault: 'delay', ms, then: step }
//   { recorded: <message object> }        a recorded real reply, sent as it is (recorded.mjs); for a
//                                         request that does not stream
//   { recordedEvents: [<event objects>] } a recorded real stream: each event sent in order as
//                                         `event: <type>\ndata: <its JSON>\n\n` (`streamDelayMs`
//                                         applies); for a request that streams. The wrong one of the
//                                         two for the request is a 500 naming the test bug, never
//                                         converted; `requireContainer` works with both
//
// A gateway that echoes the request: in the wire text of an error (the message of an error step
// or `sseError`, a `body` step, a 3xx step's headers), `{echo:NAME}` becomes the value of the
// request's header NAME as it arrived (`(none)` without one), and `{echo-escaped:NAME}` the same
// written as JSON \uXXXX escapes (inside a JSON string it decodes to the value, yet never matches
// it as text), and `{echo-token:NAME}` the value's last word: the token of `Bearer <token>`.
// E.g. { status: 401, error: { message: 'invalid x-api-key {echo:x-api-key}' } }.
//
// SSE step options (on a reply step, used when the request streams):
//   streamDelayMs: N      pause between events (default: the server's `streamDelayMs`, 0 = just yield)
//   sseError: { type, message?, details? }, sseErrorAfter: N   after N events, `event: error` (its
//                         error.details when given) and the end
//   sseCutAfter: N        after N events the connection is destroyed (no message_stop)
//   sseStallAfter: N      after N events nothing more is sent (until the client gives up)
//   unknownDelta: 'x_delta'   a content_block_delta of that type in the first block
// A compaction block streams as the API streams it: content_block_start with `content: null` (no
// encrypted_content), one compaction_delta with the final content and encrypted_content, stop;
// message_start's input tokens are the first usage iteration's, and message_delta carries the
// whole usage (iterations too) and the message's context_management beside it.
//
// Long loops, simulated (the request's `context_management`, needs its betas):
//   - estimate: ceil(JSON length of the messages from the last compaction block with a summary on
//     (the API drops what precedes it), plus system and tools, / 4) — estimateInputTokens(body);
//   - compact_20260112, estimate >= trigger.value (default 150000), the step's content holding no
//     compaction block of its own: the reply starts with { type: 'compaction', content: a summary
//     naming how many messages it stands for, encrypted_content }, then the step's content;
//     usage.iterations = [compaction (input: the estimate), message (input: the estimate of the
//     summary, system and tools; output: the step's)], the top-level usage the message's (the
//     step's usage over it when given; iterations added unless it has its own). With
//     pause_after_compaction the reply is the block alone, stop_reason 'compaction', the compaction
//     iteration only, 0 tokens at the top, and the step is put back: it answers the continuation
//     (the history ending in that reply, sent again);
//   - clear_tool_uses_20250919 at its trigger (default 100000 input tokens by the estimate, or a
//     count of tool_use blocks) clears the tool uses beyond keep.value (default 3; exclude_tools
//     spared), unless that clears less than clear_at_least; clear_thinking_20251015 clears the
//     thinking of the assistant turns beyond keep (default 1 turn; 'all' keeps all). Each edit that
//     cleared something is in the reply's context_management.applied_edits ({ type,
//     cleared_tool_uses | cleared_thinking_turns, cleared_input_tokens }: the estimate of the
//     results, with clear_tool_inputs the inputs, or the thinking blocks it cleared), which every
//     request with context_management gets (an empty list: nothing cleared). The reported input
//     tokens do not shrink by it. A step's own context_management wins.
//
// Structured outputs: with `output_config.format` (or the deprecated top-level `output_format`,
// never both) a final answer (stop_reason end_turn or stop_sequence, no tool_use block) must be
// JSON matching the schema: its text blocks joined. One that does not is answered 500 api_error,
// FORMAT_MISMATCH and why (a test scripted it by mistake), streamed or not, a function step's or
// the handler's too, unless the step says `ignoresFormat: true`. Refusals (stop_reason refusal),
// cut answers (max_tokens) and recorded replies are sent as they are. The schema must stay in the
// supported subset (rules/schema-subset.mjs: every object with additionalProperties false, no
// numeric or length bounds, minItems 0 or 1, local $refs to $defs / definitions without cycles,
// the listed string formats, at most 24 optional properties and 16 unions, …), else a 400 naming
// the place in the schema; `output_config.effort` is low, medium, high, xhigh or max;
// `output_config.task_budget` ({ type: 'tokens', total, remaining? }) needs the beta
// task-budgets-2026-03-13. Asked for a format, demoModel answers with structuredAnswer's JSON.
//
// Rules beyond the pairing ones (each a 400 invalid_request_error with the real API's words where known):
//   - every message but a final assistant one has non-empty content ("" and [] are empty);
//   - thinking / redacted_thinking blocks come back unchanged (signatures checked, thinking on or off);
//     with `thinking` enabled or adaptive the assistant turn whose tool_use the final tool results
//     answer (or a final assistant message with server tools) starts with one; thinking rules out a
//     forcing tool_choice, temperature other than 1, top_k, top_p below 0.95; with it off, a final
//     assistant message holds no thinking block;
//   - server tools: typed tool definitions with their own fields; a server_tool_use is followed by
//     its result block in the same message, except in the final message (a paused turn) or while
//     the tool loop goes on (only tool results from the user since): code execution waiting for
//     code-called tool results, a tool search beside client calls, whose result then starts a
//     later assistant message; a client tool_result never answers it;
//   - results for code-called tool_use blocks (programmatic tool calling) need `container`;
//   - compaction, document, search_result, tool_reference, citations have their shapes checked; an
//     unknown block type is a 400, except `x_future_block` (test-only) which is accepted back as is;
//   - newer top-level fields (thinking, service_tier, cache_control, output_config,
//     context_management, container, inference_geo, …) are type-checked; each context_management
//     edit has its own fields and needs its beta in anthropic-beta (compact_20260112:
//     compact-2026-01-12; clear_tool_uses_20250919, clear_thinking_20251015:
//     context-management-2025-06-27);
//   - the MCP connector (beta mcp-client-2025-11-20): `mcp_servers` entries { type: 'url', url
//     (https://), name (unique), authorization_token? } and nothing else, each named by exactly one
//     `mcp_toolset` tool ({ mcp_server_name, default_config?, configs?, cache_control? }, configs of
//     { enabled?, defer_loading? }), and each toolset naming a server of the request; `mcp_tool_use` /
//     `mcp_tool_result` blocks are the assistant's, the result after its call in the same message
//     (unless the call is in the final message);
//   - `role: "system"` messages only with the beta mid-conversation-tool-changes-2026-07-01: a
//     non-empty list of tool_addition / tool_removal blocks ({ type, tool: { type: 'tool_reference',
//     name } }, a tool of `tools`), never first; a tool_use's results still come in the very next
//     message; the thinking rule looks past trailing system messages.
//
// Threads (beta message-threads-2026-08-12, threads.mjs): a request with `thread: { type: 'create' }`
// has its whole conversation held under its reply's id; `{ type: 'continue', previous_message_id }`
// sends only the messages after that reply (without system and tools, which the thread holds; the
// same values may be repeated, other ones are thread_fingerprint_mismatch), and every rule checks
// the held conversation with them. A reply is continued once (thread_already_continued), by one
// request at a time (thread_continue_in_flight); an id not held is a 404 thread_not_found; `messages:
// []` only continues a pause_turn or compaction reply; a reply is held once whole (a stream cut
// before message_stop holds nothing). Every refusal has error.details.error_code. Tests script the
// rest: a reply step's `threadState: 'lost' | 'continued' | 'in_flight'` (what becomes of it once
// held), `api.threads.set(id, state)`, `api.threads.refuse(names)` (thread_unsupported_request with
// details.unsupported: `thinking`, `context_management`, `cache_control` where the request has them,
// any other name for every thread request), `api.threads.get(id)` (the held conversation); an error
// step's `error.details` is sent as given. `startMockApi({ heldThreads: { limit, holdEndTurn } })`:
// how many replies are held (20 000; the oldest expire first) and whether one that ended its turn
// is (`holdEndTurn: false` holds none, whatever its step's `threadState`). Steps, the handler and
// the long-loop simulation read the whole conversation (`record.fullBody`), the record's `body`
// what was sent.
//
// Request records (`api.requests[i]`): method, path, headers, body, rawBody, retryCount, status,
// requestId, receivedAt, betas (anthropic-beta split on commas), container, fullBody (above); for
// streamed replies also stream: true, sseEvents (names sent) and clientClosed (the client left
// before the end); `broken: { message, code? }` when the request broke a rule (the refusal's
// message, and a thread refusal's error_code) or the script failed it (no step left, an unmet
// requireContainer, an answer that misses the format), which a test harness may count as its failure.
// `api.waitFor(predicate, timeoutMs?)`, `api.waitForRequests(n, timeoutMs?)` poll the records.
//
// Prompt caching: with `cache_control` anywhere, usage reports cache tokens from a deterministic
// model (cache.mjs): the first request with a prefix creates it, later ones read it.
//
// rules.json is the stand-in's table of rules (a request, the API's answer), which
// __test__/stand-in-rules.test.mjs sends. The Rust integration tests talk to this stand-in too
// (tests/support/stand-in.mjs runs it for them).
//
// Cloud platforms: `startMockApi({ platform: 'bedrock' | 'vertex' | 'foundry' | 'aws' | 'google-cloud' })`
// (or { type, …options }) makes the server play that platform's front door — its routes, its
// authentication (SigV4 recomputed, a local Google token endpoint, keys), its body rules and its
// error shapes — before the same rules and script as here (platforms/index.mjs;
// docs/architecture.md lists what each door checks). `TEST_CREDENTIALS` are the keys the doors
// know unless a test passes its own; `api.platform` holds a door's controls (`expireTokens()`).
//
// CLI: node stand-in/cli.mjs [--port N] [--host H] [--key K] [--demo] [--verbose]
//
// Layout: server.mjs (HTTP, records, routing), rules/ (what a request must meet: index.mjs runs
// fields.mjs, output-format.mjs with schema-subset.mjs, context-management.mjs, tools.mjs,
// blocks.mjs with tool-changes.mjs, mcp-connector.mjs and conversation.mjs in the API's order), replies.mjs
// (builders), conforms.mjs (a final answer against the format), structured.mjs
// (structuredAnswer), sse.mjs (streaming), faults.mjs, recorded.mjs (recorded replies), cache.mjs
// (prompt-cache usage), compaction.mjs and context-editing.mjs (the long-loop simulation),
// threads.mjs (the conversations held between turns), platforms/ (the cloud platforms' doors), signatures.mjs, echo.mjs, errors.mjs, values.mjs, demo-model.mjs,
// default-model.mjs, cli.mjs. The package's test kit (lib/testing/, `anthropic-tool-calling/testing`)
// starts this server with its own replies; the package ships this folder for it (all but rules.json).

export { startMockApi } from './server.mjs';
export { THREADS_BETA } from './threads.mjs';
export {
  text, toolUse, thinking, redactedThinking, serverToolUse, webSearchResult, mcpToolUse, mcpToolResult, compaction, toolAddition,
  toolRemoval, reply,
} from './replies.mjs';
export { estimateInputTokens } from './compaction.mjs';
export { signThinking } from './signatures.mjs';
export { sseEvents } from './sse.mjs';
export { echoed } from './echo.mjs';
export { CONTAINER_REQUIRED } from './rules/conversation.mjs';
export { demoModel } from './demo-model.mjs';
export { defaultModel } from './default-model.mjs';
export { structuredAnswer } from './structured.mjs';
export { FORMAT_MISMATCH, schemaMismatch } from './conforms.mjs';
export { PLATFORMS, TEST_CREDENTIALS } from './platforms/index.mjs';

// Rules across messages: tool_use / tool_result pairing, server tool blocks and their results,
// where thinking blocks must be (and what thinking rules out), and the container that results for
// code-called tools continue.

import { fail } from '../errors.mjs';
import { blocksOf, has, isObject } from '../values.mjs';
import { SERVER_RESULT_TYPES } from './blocks.mjs';
import { thinkingOn } from './fields.mjs';

const THINKING_DOCS = 'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking';

/** A tool_use called from inside code execution (programmatic tool calling), not by the model directly. */
const calledByCode = (b) => b.type === 'tool_use' && isObject(b.caller) && b.caller.type !== 'direct';

/** A user message of tool_result blocks only: the tool loop goes on, no new turn starts. */
const onlyToolResults = (m) => m.role === 'user' && blocksOf(m).length > 0 && blocksOf(m).every((b) => b.type === 'tool_result');

/**
 * Whether the server_tool_use `id` of assistant message `i` may wait for its result: the messages
 * after it, up to the assistant message holding that result (or the end), go on with the tool
 * loop (user messages of tool results only). Real runs do this: a tool search or a code
 * execution running beside client calls gets its result in the reply after their results.
 */
function mayWait(messages, i, id) {
  for (const m of messages.slice(i + 1)) {
    if (m.role === 'assistant' && blocksOf(m).some((b) => SERVER_RESULT_TYPES.has(b.type) && b.tool_use_id === id)) return true;
    if (m.role === 'user' && !onlyToolResults(m)) return false;
  }
  return true;
}

/**
 * Server tools: every server_tool_use has its result block after it in the same message, except in
 * the final message (a paused turn sent back to continue), in the assistant message whose
 * code-called tool_use blocks the final user message answers (the code execution is still
 * pending), or while the tool loop goes on (mayWait), its result then in a later assistant
 * message. A result block must follow its server_tool_use.
 */
export function checkServerPairing(messages) {
  const last = messages.length - 1;
  /** Ids left open by an earlier assistant message that may wait: their result may come later. */
  const waiting = new Set();
  messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    const blocks = blocksOf(m);
    const pendingAllowed = i === last || (i === last - 1 && blocks.some(calledByCode));
    const open = new Map();
    blocks.forEach((b, j) => {
      if (b.type === 'server_tool_use') open.set(b.id, j);
      else if (SERVER_RESULT_TYPES.has(b.type)) {
        if (!open.has(b.tool_use_id) && !waiting.has(b.tool_use_id)) {
          fail(
            `messages.${i}.content.${j}: \`${b.type}\` block has tool_use_id ${b.tool_use_id}, which matches no \`server_tool_use\` block before it in this message.`,
          );
        }
        open.delete(b.tool_use_id);
        waiting.delete(b.tool_use_id);
      }
    });
    const unanswered = pendingAllowed ? [] : [...open.keys()].filter((id) => !mayWait(messages, i, id));
    if (unanswered.length > 0) {
      fail(
        `messages.${i}: \`server_tool_use\` ids were found without their result blocks: ${unanswered.join(', ')}. ` +
          'A `server_tool_use` block must be followed by its result block in the same message, unless it is in the final message (a paused turn).',
      );
    }
    for (const id of open.keys()) waiting.add(id);
  });
}

/** The tool_use / tool_result pairing rules, with the real API's messages. */
export function checkPairing(messages) {
  const seenIds = new Set();
  messages.forEach((m, i) => {
    const blocks = blocksOf(m);
    if (m.role === 'assistant') {
      const ids = [];
      blocks.forEach((b, j) => {
        if (b.type !== 'tool_use') return;
        if (seenIds.has(b.id)) fail(`messages.${i}.content.${j}: \`tool_use\` ids must be unique`);
        seenIds.add(b.id);
        ids.push(b.id);
      });
      if (ids.length === 0) return;
      const next = messages[i + 1];
      const nextBlocks = next && next.role === 'user' ? blocksOf(next) : [];
      const answered = new Set(nextBlocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        fail(
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. ` +
            'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
        );
      }
      let leading = 0;
      while (leading < nextBlocks.length && nextBlocks[leading].type === 'tool_result') leading++;
      if (leading < ids.length) {
        fail(
          `messages.${i + 1}: Did not find ${ids.length} \`tool_result\` block(s) at the beginning of this message. ` +
            'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
        );
      }
    } else {
      const prev = messages[i - 1];
      const offered = new Set(
        prev && prev.role === 'assistant' ? blocksOf(prev).filter((b) => b.type === 'tool_use').map((b) => b.id) : [],
      );
      const answered = new Set();
      blocks.forEach((b, j) => {
        if (b.type !== 'tool_result') return;
        if (!offered.has(b.tool_use_id)) {
          fail(
            `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${b.tool_use_id}. ` +
              'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
          );
        }
        if (answered.has(b.tool_use_id)) {
          fail(`messages.${i}.content.${j}: each tool_use must have a single result. Found multiple \`tool_result\` blocks with id: ${b.tool_use_id}`);
        }
        answered.add(b.tool_use_id);
      });
    }
  });
}

/**
 * The last message that is not a `system` one: tool changes after the final results or reply leave
 * the turn they follow the current one.
 */
const finalTurn = (messages) => messages.findLastIndex((m) => m.role !== 'system');

/** What thinking rules out: sampling changes and forced tool use. */
export function checkThinkingCompatibility(body) {
  if (!thinkingOn(body)) return;
  if (has(body, 'temperature') && body.temperature !== 1) {
    fail(`\`temperature\` may only be set to 1 when thinking is enabled or in adaptive mode. ${THINKING_DOCS}`);
  }
  if (has(body, 'top_k')) fail(`\`top_k\` must be unset when thinking is enabled. ${THINKING_DOCS}`);
  if (has(body, 'top_p') && body.top_p < 0.95) {
    fail(`\`top_p\` must be greater than or equal to 0.95 or unset when thinking is enabled. ${THINKING_DOCS}`);
  }
  const forced = body.tool_choice?.type;
  if (forced === 'any' || forced === 'tool') fail('Thinking may not be enabled when tool_choice forces tool use.');
}

/**
 * With thinking on, the assistant message of the current tool loop (the one whose tool_use blocks
 * the final user message answers, or a final assistant message holding server tool calls) must
 * start with a thinking or redacted_thinking block.
 */
export function checkThinkingPlacement(messages) {
  const last = finalTurn(messages);
  let n = -1;
  const final = messages[last];
  if (final.role === 'user' && blocksOf(final).some((b) => b.type === 'tool_result') && messages[last - 1]?.role === 'assistant') {
    n = last - 1;
  } else if (final.role === 'assistant' && blocksOf(final).some((b) => b.type === 'tool_use' || b.type === 'server_tool_use')) {
    n = last;
  }
  if (n < 0) return;
  const first = blocksOf(messages[n])[0];
  if (!first || first.type === 'thinking' || first.type === 'redacted_thinking') return;
  fail(
    `messages.${n}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. ` +
      'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of ' +
      '`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this ' +
      'requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking',
  );
}

/** With thinking off, a final (prefilled or paused) assistant message may not hold thinking blocks. */
export function checkNoFinalThinking(messages) {
  const n = messages.length - 1;
  if (messages[n].role !== 'assistant') return;
  const m = blocksOf(messages[n]).findIndex((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
  if (m < 0) return;
  fail(
    `messages.${n}.content.${m}: When thinking is disabled, an \`assistant\` message in the final position cannot contain ` +
      '`thinking`. To use thinking blocks, enable `thinking` in your request.',
  );
}

export const CONTAINER_REQUIRED = 'container_id is required when there are pending tool uses generated by code execution with tools.';

/** Programmatic tool calling: results for code-called tool_use blocks continue a container, which must be named. */
export function checkPendingCodeExecution(body) {
  const messages = body.messages;
  const final = messages[finalTurn(messages)];
  const prev = messages[finalTurn(messages) - 1];
  if (final.role !== 'user' || prev?.role !== 'assistant' || !blocksOf(prev).some(calledByCode)) return;
  if (body.container === undefined || body.container === null) fail(CONTAINER_REQUIRED);
}

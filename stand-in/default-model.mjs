// defaultModel: the test kit's model when a test scripts no replies. It calls the offered tools
// that the user's latest prompt names, and once their results are back it says what each
// returned, so a quick try of one's own tools needs no script:
//
//   "Call get_weather with {"city": "Paris"}"  → tool_use get_weather { city: 'Paris' }
//   (the tool's result comes back)              → "get_weather returned: {"temp":21}"
//
// - A tool counts as named when its name stands in the prompt as a word of its own; named tools
//   are called in the order the prompt names them, all in one reply, or one reply each with
//   `disable_parallel_tool_use`. A tool already called since that prompt is not called again.
// - The input is the first JSON object in the prompt when it matches the tool's schema, else a
//   value built to match it from that object's fields and placeholders (structured.mjs).
// - tool_choice: `none` never calls; `tool` calls the tool it names; `any` calls the named tools,
//   or the first offered tool when the prompt names none.
// - With a structured-output format the answer is JSON matching its schema, filled from the
//   fields of the tool results (as demoModel does).

import { factsOf, textOf, toolResultText } from './demo-model.mjs';
import { reply, text, toolUse } from './replies.mjs';
import { formatSchemaOf } from './rules/output-format.mjs';
import { schemaMismatch } from './conforms.mjs';
import { structuredAnswer } from './structured.mjs';
import { blocksOf, isObject } from './values.mjs';

/** How many `{` of a prompt are tried as the start of a JSON object (a prompt is small). */
const MAX_OBJECT_STARTS = 16;

/** The index of the latest user message that says something (not only tool results), or -1. */
function lastPromptIndex(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'user' && textOf(messages[i].content).trim() !== '') return i;
  }
  return -1;
}

/** The end of the balanced `{…}` starting at `from` (strings skipped), or -1. */
function closingBrace(s, from) {
  let depth = 0;
  let inString = false;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

/** The first JSON object written in `s`, or {}. */
function objectIn(s) {
  let from = s.indexOf('{');
  for (let tries = 0; from !== -1 && tries < MAX_OBJECT_STARTS; tries++) {
    const end = closingBrace(s, from);
    if (end === -1) break;
    try {
      const value = JSON.parse(s.slice(from, end + 1));
      if (isObject(value)) return value;
    } catch {}
    from = s.indexOf('{', from + 1);
  }
  return {};
}

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The offered tools the prompt names, in the order it names them. */
function namedIn(prompt, tools) {
  const found = [];
  for (const tool of tools) {
    const at = prompt.search(new RegExp(`(?<![A-Za-z0-9_-])${escapeRegExp(tool.name)}(?![A-Za-z0-9_-])`));
    if (at !== -1) found.push({ tool, at });
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.tool);
}

/** The tool's input: the prompt's object when the schema takes it, else one built to fit. */
function inputFor(tool, facts) {
  const schema = isObject(tool.input_schema) ? tool.input_schema : { type: 'object' };
  if (schemaMismatch(schema, facts) === null) return facts;
  const built = structuredAnswer(schema, facts);
  return isObject(built) ? built : {};
}

/** The custom tools of the request: those the model calls with tool_use. */
function clientTools(body) {
  const tools = Array.isArray(body?.tools) ? body.tools : [];
  return tools.filter((t) => isObject(t) && typeof t.name === 'string' && (t.type === undefined || t.type === 'custom'));
}

/** What each result of the last message says, one line each. */
function sayResults(messages) {
  const results = blocksOf(messages.at(-1)).filter((b) => isObject(b) && b.type === 'tool_result');
  const calls = new Map(messages.flatMap((m) => blocksOf(m)).filter((b) => isObject(b) && b.type === 'tool_use').map((b) => [b.id, b.name]));
  return results.map((r) => `${calls.get(r.tool_use_id) ?? 'the tool'} ${r.is_error === true ? 'failed' : 'returned'}: ${toolResultText(r)}`).join('\n');
}

/** The answer: `words`, or JSON matching the request's format built from what the tools returned. */
function answer(body, words, since) {
  const schema = formatSchemaOf(body);
  if (schema === null) return reply([text(words)]);
  return reply([text(JSON.stringify(structuredAnswer(schema, factsOf(since), words)))]);
}

/** The step for `body`: a call of the tools its prompt names, or an answer. */
export function defaultModel(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const at = lastPromptIndex(messages);
  const prompt = at === -1 ? '' : textOf(messages[at].content);
  const since = messages.slice(at + 1);
  const tools = clientTools(body);
  const choice = isObject(body?.tool_choice) ? body.tool_choice : { type: 'auto' };
  const called = new Set(since.flatMap((m) => blocksOf(m)).filter((b) => isObject(b) && b.type === 'tool_use').map((b) => b.name));

  let calls = [];
  if (choice.type === 'tool') calls = tools.filter((t) => t.name === choice.name);
  else if (choice.type !== 'none') {
    calls = namedIn(prompt, tools).filter((t) => !called.has(t.name));
    if (choice.type === 'any' && calls.length === 0) calls = namedIn(prompt, tools).slice(0, 1);
    if (choice.type === 'any' && calls.length === 0) calls = tools.slice(0, 1);
  }
  if (choice.disable_parallel_tool_use === true) calls = calls.slice(0, 1);
  if (calls.length > 0) {
    const facts = objectIn(prompt);
    return reply(calls.map((tool) => toolUse(tool.name, inputFor(tool, facts))));
  }
  if (since.length > 0) return answer(body, sayResults(messages) || 'Done.', since);
  const offered = tools.map((t) => t.name).join(', ');
  return answer(body, offered ? `This stand-in model calls the tools a prompt names; this one names none of: ${offered}.` : 'Hello from the stand-in model.', since);
}

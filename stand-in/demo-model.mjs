// demoModel: a tiny deterministic rule-based "model" for the demo and the example app: it calls
// the order tools it is offered, then sums up their results. Asked when an order arrives or ships,
// it calls get_shipping_estimate when that is offered (the example app's MCP server has it) and
// answers with the estimate's own words. Asked for structured output
// (`output_config.format`), its answer is JSON matching the schema instead of its sentence: the
// facts of the tool results it read, with the sentence for free text (structured.mjs).

import { reply, text, toolUse } from './replies.mjs';
import { formatSchemaOf } from './rules/output-format.mjs';
import { structuredAnswer } from './structured.mjs';
import { blocksOf, isObject } from './values.mjs';

const ORDER_NUMBER = /#?(\d{3,})/;
const RETURN_INTENT = /\breturn|devoluci[oó]n|devolver/i;
const SHIPPING_INTENT = /\barriv|\bships?\b|\bshipping\b|\bwhen\b.*\bdeliver|\bllega/i;
const UNKNOWN_ORDER = /unknown|not found|does not exist|doesn't exist|no such|no existe|desconocid|no encontrad/i;

/** The text of a message's content: a string as it is, the text blocks joined by newlines. */
export function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b) => b && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

export function toolResultText(block) {
  return typeof block.content === 'string' ? block.content : textOf(block.content);
}

/** The latest user message that says something (not just tool results). */
function lastUserText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    const t = textOf(m.content);
    if (t.trim()) return t;
  }
  return '';
}

/** Input for a tool: `orderId`, plus 'not specified' (or the first enum value) for other required fields. */
function inputFor(tool, orderId) {
  const input = { orderId };
  const schema = tool.input_schema ?? {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const field of required) {
    if (field in input) continue;
    const prop = schema.properties?.[field] ?? {};
    if (Array.isArray(prop.enum) && prop.enum.length > 0) input[field] = prop.enum[0];
    else if (prop.type === 'integer' || prop.type === 'number') input[field] = 0;
    else if (prop.type === 'boolean') input[field] = false;
    else input[field] = 'not specified';
  }
  return input;
}

/** Input for get_shipping_estimate: the order number under the name its schema gives it (`order_id` on the MCP server). */
function shippingInput(tool, orderId) {
  const names = Object.keys(tool.input_schema?.properties ?? {});
  return { [names.find((n) => /^order_?id$/i.test(n)) ?? 'orderId']: orderId };
}

function summarise(name, content, input) {
  // The estimate is already a sentence for the customer.
  if (name === 'get_shipping_estimate') return content;
  if (name === 'get_order_status') {
    let data = null;
    try {
      data = JSON.parse(content);
    } catch {}
    if (isObject(data) && data.status !== undefined) {
      const id = data.orderId ?? data.id ?? input?.orderId;
      let line = `Order #${id} is ${data.status}.`;
      if (data.eta !== undefined) line += ` Expected delivery: ${data.eta}.`;
      if (data.carrier !== undefined) line += ` Carrier: ${data.carrier}.`;
      return line;
    }
  }
  return `Result of ${name ?? 'the tool'}: ${content}`;
}

/** The fields of every JSON object a tool returned in the conversation (a later one's win). */
export function factsOf(messages) {
  const facts = {};
  for (const m of messages) {
    for (const r of blocksOf(m).filter((b) => b?.type === 'tool_result' && b.is_error !== true)) {
      try {
        const data = JSON.parse(toolResultText(r));
        if (isObject(data)) Object.assign(facts, data);
      } catch {}
    }
  }
  return facts;
}

/** Step for `body`: calls the order tools it is offered, then sums up their results. */
export function demoModel(body) {
  const step = sayingModel(body);
  const schema = formatSchemaOf(body);
  if (schema === null || step.stop_reason !== 'end_turn') return step;
  const line = step.content.map((b) => b.text).join('');
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return reply([text(JSON.stringify(structuredAnswer(schema, factsOf(messages), line)))]);
}

/** What the demo model says or calls, as text (the request's format aside). */
function sayingModel(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const tools = new Map((Array.isArray(body?.tools) ? body.tools : []).map((t) => [t.name, t]));
  const mayCallTools = body?.tool_choice?.type !== 'none';
  const last = messages[messages.length - 1];
  const fallback = reply([text('I can help with order questions. Which order do you mean?')]);
  if (!last || last.role !== 'user') return fallback;

  const results = blocksOf(last).filter((b) => b && b.type === 'tool_result');
  if (results.length > 0) {
    const calls = new Map(blocksOf(messages[messages.length - 2]).filter((b) => b?.type === 'tool_use').map((b) => [b.id, b]));
    const failed = results.filter((r) => r.is_error === true);
    if (failed.length === 0) {
      const lines = results.map((r) => {
        const call = calls.get(r.tool_use_id);
        return summarise(call?.name, toolResultText(r), call?.input);
      });
      return reply([text(lines.join(' '))]);
    }
    // Recovery: a return for an unknown order, when the user named another order ("... or #1234").
    const tried = new Set(
      messages.flatMap((m) => blocksOf(m).filter((b) => b?.type === 'tool_use' && b.name === 'solicitar_devolucion').map((b) => String(b.input?.orderId))),
    );
    for (const r of failed) {
      const call = calls.get(r.tool_use_id);
      if (call?.name !== 'solicitar_devolucion' || !tools.has('solicitar_devolucion') || !mayCallTools) continue;
      if (!UNKNOWN_ORDER.test(toolResultText(r))) continue;
      const numbers = [...lastUserText(messages).matchAll(/#?(\d{3,})/g)].map((m) => m[1]);
      const next = numbers.length >= 2 ? numbers.find((n) => !tried.has(n)) : undefined;
      if (next !== undefined) {
        return reply([toolUse('solicitar_devolucion', { ...(isObject(call.input) ? call.input : {}), orderId: next })]);
      }
    }
    return reply([text(`I could not complete that: ${failed.map(toolResultText).join('; ')}`)]);
  }

  const said = textOf(last.content);
  const order = ORDER_NUMBER.exec(said);
  if (order && mayCallTools) {
    if (RETURN_INTENT.test(said) && tools.has('solicitar_devolucion')) {
      return reply([toolUse('solicitar_devolucion', inputFor(tools.get('solicitar_devolucion'), order[1]))]);
    }
    if (SHIPPING_INTENT.test(said) && tools.has('get_shipping_estimate')) {
      return reply([toolUse('get_shipping_estimate', shippingInput(tools.get('get_shipping_estimate'), order[1]))]);
    }
    if (tools.has('get_order_status')) {
      return reply([toolUse('get_order_status', { orderId: order[1] })]);
    }
  }
  return fallback;
}
